package adaptertest

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"switchboard/engine"
	"switchboard/providers/httpgw"
)

// envName finds the variables of a ${NAME} or ${NAME:-default} expression.
var envName = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)`)

// placeholderBase stands in for a baseUrl the snippet does not give (or gives through an
// environment variable that is not set).
const placeholderBase = "https://gateway.invalid/"

// Prepared is what the adapter's prepare built for one message: the request that would be
// sent, or the outcome of a refused prepare.
type Prepared struct {
	Request *httpgw.PreparedRequest
	// Refused is set instead of Request when prepare failed or its output was refused.
	Refused *engine.Outcome
}

// Prepare runs the prepare function of the adapter folder dir for the message of messageFile
// (the message.yaml form of a golden case) and returns the request it builds, without sending
// anything. The baseUrl is the snippet's, with ${VAR} taken from getenv (a placeholder when it
// has none); the credential is never added. err is set when the folder or the message cannot
// be read or the provider cannot be built.
func Prepare(dir, messageFile string, getenv func(string) string) (Prepared, error) {
	a, err := loadAdapter(dir)
	if err != nil {
		return Prepared{}, err
	}
	data, err := os.ReadFile(messageFile)
	if err != nil {
		return Prepared{}, fmt.Errorf("message %s: %w", messageFile, err)
	}
	c := &caseFile{path: messageFile, message: &messageSpec{}, setup: setupSpec{Now: time.Now(), Env: parameterEnv(a, getenv)}}
	if err := decodeStrict(data, c.message); err != nil {
		return Prepared{}, fmt.Errorf("%s: %w", filepath.Base(messageFile), err)
	}
	// The snippet's baseUrl is resolved by baseOf (a placeholder when its variables are unset),
	// so config is given the placeholder instead of expanding it.
	c.setup.BaseURL = placeholderBase
	cfg, _, err := a.buildConfig(c, "http://127.0.0.1", engine.SystemClock{}, false)
	if err != nil {
		return Prepared{}, err
	}
	cfg.BaseURL, cfg.Logger = baseOf(a, getenv), slog.New(slog.DiscardHandler)
	p, err := httpgw.New(cfg)
	if err != nil {
		return Prepared{}, err
	}
	defer p.Close()
	req, refused := p.Prepare(context.Background(), c.outbound(1))
	return Prepared{Request: req, Refused: refused}, nil
}

// parameterEnv is the environment the snippet's parameters name (${NAME}), from getenv.
func parameterEnv(a *adapter, getenv func(string) string) map[string]string {
	env := map[string]string{}
	if a.snippet == nil || getenv == nil {
		return env
	}
	for _, value := range a.snippet.Parameters {
		for _, m := range envName.FindAllStringSubmatch(value, -1) {
			env[m[1]] = getenv(m[1])
		}
	}
	return env
}

// baseOf is the snippet's baseUrl with its variables substituted, or the placeholder.
func baseOf(a *adapter, getenv func(string) string) *url.URL {
	u, _ := url.Parse(placeholderBase)
	if a.snippet == nil || a.snippet.BaseURL == "" {
		return u
	}
	env := map[string]string{}
	for _, m := range envName.FindAllStringSubmatch(a.snippet.BaseURL, -1) {
		if getenv != nil {
			env[m[1]] = getenv(m[1])
		}
	}
	expanded, err := expandEnv(a.snippet.BaseURL, env)
	if err != nil {
		return u
	}
	if b, err := url.Parse(expanded); err == nil && b.Host != "" {
		return b
	}
	return u
}
