package adaptertest

import (
	"crypto"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"switchboard/engine"
	"switchboard/providers/httpgw"
)

// adapter is one adapter folder: provider.yaml, its script, and the optional runtime snippet.
type adapter struct {
	dir        string
	id         string
	scriptName string
	source     string
	manifest   providerYAML
	snippet    *snippetProvider
}

// providerYAML is provider.yaml (docs/package.md, "HTTP provider adapters"), decoded strictly.
type providerYAML struct {
	Script  string `yaml:"script"`
	Request struct {
		Method  string   `yaml:"method"`
		Headers []string `yaml:"headers"`
	} `yaml:"request"`
	ResponseHeaders []string `yaml:"responseHeaders"`
	Capabilities    struct {
		Receipts         string  `yaml:"receipts"`
		ConcurrencyLimit int     `yaml:"concurrencyLimit"`
		RatePerSecond    float64 `yaml:"ratePerSecond"`
	} `yaml:"capabilities"`
}

// snippetFile is runtime-snippet.yaml: a runtime file's `providers` member with one provider.
type snippetFile struct {
	Providers map[string]snippetProvider `yaml:"providers"`
}

// snippetProvider is one http provider connection of a runtime file; references are not read.
type snippetProvider struct {
	Kind                 string  `yaml:"kind"`
	BaseURL              string  `yaml:"baseUrl"`
	TimeoutMilliseconds  int     `yaml:"timeoutMilliseconds"`
	MaximumResponseBytes int64   `yaml:"maximumResponseBytes"`
	ConcurrencyLimit     int     `yaml:"concurrencyLimit"`
	RatePerSecond        float64 `yaml:"ratePerSecond"`
	Authentication       struct {
		Kind            string   `yaml:"kind"`
		Scheme          string   `yaml:"scheme"`
		Header          string   `yaml:"header"`
		UsernameRef     string   `yaml:"usernameRef"`
		PasswordRef     string   `yaml:"passwordRef"`
		TokenRef        string   `yaml:"tokenRef"`
		Prefix          string   `yaml:"prefix"` // path-token
		TokenURL        string   `yaml:"tokenUrl"`
		ClientID        string   `yaml:"clientId"`
		ClientSecretRef string   `yaml:"clientSecretRef"`
		Scopes          []string `yaml:"scopes"`
		// aws-sigv4
		Service            string `yaml:"service"`
		Region             string `yaml:"region"`
		AccessKeyIDRef     string `yaml:"accessKeyIdRef"`
		SecretAccessKeyRef string `yaml:"secretAccessKeyRef"`
		SessionTokenRef    string `yaml:"sessionTokenRef"`
		// google-service-account
		ServiceAccountRef string `yaml:"serviceAccountRef"`
		// apns-token
		KeyRef string `yaml:"keyRef"`
		KeyID  string `yaml:"keyId"`
		TeamID string `yaml:"teamId"`
	} `yaml:"authentication"`
	// HTTP2 and TrustedCAFile are not used: the cases' gateway speaks HTTP/1.1 in the clear.
	HTTP2         bool   `yaml:"http2"`
	TrustedCAFile string `yaml:"trustedCaFile"`
	// Parameters are the provider's non-secret values for the adapter (profile.parameters).
	Parameters       map[string]string `yaml:"parameters"`
	CallbackVerifier *verifierSpec     `yaml:"callbackVerifier"`
}

// ErrNoCases is the error (wrapped) of an adapter folder without golden cases.
var ErrNoCases = errors.New("no golden cases (testdata/*.txtar)")

var scriptPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*\.js$`)

// loadAdapter reads an adapter folder. Errors wrap the file system's (fs.ErrNotExist, …) when
// a file cannot be read.
func loadAdapter(dir string) (*adapter, error) {
	a := &adapter{dir: dir, id: strings.ToLower(filepath.Base(filepath.Clean(dir)))}
	data, err := os.ReadFile(filepath.Join(dir, "provider.yaml"))
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", dir, err)
	}
	if err := decodeStrict(data, &a.manifest); err != nil {
		return nil, fmt.Errorf("adapter %s: provider.yaml: %w", dir, err)
	}
	script := a.manifest.Script
	if script == "" {
		script = "adapter.js"
	}
	if !scriptPattern.MatchString(script) {
		return nil, fmt.Errorf("adapter %s: provider.yaml: script %q is not a .js file in the folder", dir, script)
	}
	src, err := os.ReadFile(filepath.Join(dir, script))
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", dir, err)
	}
	a.scriptName, a.source = script, string(src)
	switch a.manifest.Capabilities.Receipts {
	case "", "none", "callback":
	default:
		return nil, fmt.Errorf("adapter %s: provider.yaml: capabilities.receipts must be callback or none", dir)
	}
	data, err = os.ReadFile(filepath.Join(dir, "runtime-snippet.yaml"))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("adapter %s: %w", dir, err)
	default:
		var sf snippetFile
		if err := decodeStrict(data, &sf); err != nil {
			return nil, fmt.Errorf("adapter %s: runtime-snippet.yaml: %w", dir, err)
		}
		if len(sf.Providers) != 1 {
			return nil, fmt.Errorf("adapter %s: runtime-snippet.yaml: providers must hold exactly one provider", dir)
		}
		for id, p := range sf.Providers {
			if p.Kind != "http" {
				return nil, fmt.Errorf("adapter %s: runtime-snippet.yaml: provider %s is not kind http", dir, id)
			}
			a.id, a.snippet = id, &p
		}
	}
	return a, nil
}

// cases lists the adapter's golden case files, sorted.
func (a *adapter) cases() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(a.dir, "testdata", "*.txtar"))
	if err != nil {
		return nil, fmt.Errorf("adapter %s: %w", a.dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("adapter %s: %w", a.dir, ErrNoCases)
	}
	sort.Strings(files)
	return files, nil
}

// declaredHeaders are the request headers a golden request shows: those the adapter may set,
// and content-type.
func (a *adapter) declaredHeaders() map[string]bool {
	set := map[string]bool{"content-type": true}
	for _, h := range a.manifest.Request.Headers {
		set[strings.ToLower(h)] = true
	}
	return set
}

// config builds the provider for one case against the gateway at gatewayURL, with the
// callback verifier when the case has callbacks. It returns the private key that signs
// ecdsa-p256 or ed25519 callbacks (nil unless setup.yaml gives one).
func (a *adapter) config(c *caseFile, gatewayURL string, clock engine.Clock) (httpgw.Config, crypto.Signer, error) {
	// A case without callbacks needs no verifier, and so no test secret.
	return a.buildConfig(c, gatewayURL, clock, c.hasCallbacks())
}

// buildConfig is config; without verify the provider gets no callback verifier (Prepare sends
// nothing and takes no callback, so it needs neither the verifier nor its test secret).
func (a *adapter) buildConfig(c *caseFile, gatewayURL string, clock engine.Clock, verify bool) (httpgw.Config, crypto.Signer, error) {
	cfg := httpgw.Config{
		ID: a.id, ScriptName: a.scriptName, Source: a.source, Method: a.manifest.Request.Method,
		RequestHeaders: a.manifest.Request.Headers, ResponseHeaders: a.manifest.ResponseHeaders,
		ReceiptsCallback: a.manifest.Capabilities.Receipts == "callback", ConcurrencyLimit: a.manifest.Capabilities.ConcurrencyLimit,
		IdempotentSubmit: c.setup.IdempotentSubmit, Clock: clock, Logger: slog.New(slog.DiscardHandler),
		Auth: httpgw.Auth{Kind: httpgw.AuthNone}, Timeout: 5 * time.Second, CallbackURL: c.setup.CallbackURL,
	}
	base, verifier := c.setup.BaseURL, c.setup.Verifier
	if s := a.snippet; s != nil {
		if base == "" {
			base = s.BaseURL
		}
		if verifier == nil {
			verifier = s.CallbackVerifier
		}
		if s.TimeoutMilliseconds > 0 {
			cfg.Timeout = time.Duration(s.TimeoutMilliseconds) * time.Millisecond
		}
		cfg.MaximumResponseBytes = s.MaximumResponseBytes
		cfg.Auth = standInAuth(s.Authentication.Kind, s.Authentication.Scheme, s.Authentication.Header)
		cfg.Auth.Prefix = s.Authentication.Prefix
		if cfg.Auth.Kind == httpgw.AuthAWSSigV4 {
			cfg.Auth.Service, cfg.Auth.Region = s.Authentication.Service, s.Authentication.Region
		}
		params, err := expandParameters(s.Parameters, c.setup.Env)
		if err != nil {
			return cfg, nil, err
		}
		cfg.Parameters = params
	}
	path := "/"
	if base != "" {
		expanded, err := expandEnv(base, c.setup.Env)
		if err != nil {
			return cfg, nil, fmt.Errorf("baseUrl: %w", err)
		}
		u, err := url.Parse(expanded)
		if err != nil {
			return cfg, nil, fmt.Errorf("baseUrl %q does not parse", expanded)
		}
		path = u.EscapedPath()
	}
	gw, err := url.Parse(gatewayURL + path)
	if err != nil {
		return cfg, nil, fmt.Errorf("baseUrl path %q: %w", path, err)
	}
	cfg.BaseURL = gw
	if verifier == nil || !verify {
		return cfg, nil, nil
	}
	vc, priv, err := verifierConfig(verifier, &c.setup)
	if err != nil {
		return cfg, nil, fmt.Errorf("callbackVerifier: %w", err)
	}
	cfg.Verifier = vc
	return cfg, priv, nil
}

// standInAuth is the credential kind of the snippet with stand-in values, so that the
// provider refuses what it would refuse in production (a declared header the credential owns).
func standInAuth(kind, scheme, header string) httpgw.Auth {
	switch kind {
	case httpgw.AuthBasic:
		return httpgw.Auth{Kind: kind, Username: "adaptertest-user", Password: "adaptertest-password"}
	case httpgw.AuthStaticAuthorization:
		return httpgw.Auth{Kind: kind, Scheme: scheme, Token: "adaptertest-token"}
	case httpgw.AuthStaticAPIKey:
		return httpgw.Auth{Kind: kind, Header: header, Token: "adaptertest-token"}
	case httpgw.AuthAWSSigV4:
		return httpgw.Auth{Kind: kind, AccessKeyID: "AKIDADAPTERTEST", SecretAccessKey: "adaptertest-secret"}
	case httpgw.AuthPathToken:
		// The one stand-in a golden request shows: it marks where the token goes in the path.
		return httpgw.Auth{Kind: kind, Token: "adaptertest-token"}
	}
	return httpgw.Auth{Kind: httpgw.AuthNone}
}

// expandParameters substitutes ${NAME} in the snippet's parameters from env, as the runtime
// loader does in every string value of a runtime file.
func expandParameters(params map[string]string, env map[string]string) (map[string]string, error) {
	if params == nil {
		return nil, nil
	}
	out := make(map[string]string, len(params))
	for name, value := range params {
		v, err := expandEnv(value, env)
		if err != nil {
			return nil, fmt.Errorf("parameters.%s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}
