package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"switchboard/packages"
	"switchboard/providers/httpgw"
	"switchboard/providers/httpgw/adaptertest"
	"switchboard/providers/httpgw/mockgw"
)

// How dev answers an http provider (session.json providers.ID.mode).
const (
	devModeMock  = "mock"  // the mock gateway, which speaks the quickstart's protocol
	devModeCases = "cases" // a stand-in that answers as the adapter's golden cases say
	devModeReal  = "real"  // the provider's real baseUrl and secrets (--real)
)

// devCallbackDelay is how long the stand-ins wait before each delivery report.
const devCallbackDelay = 200 * time.Millisecond

// devProvider is one http provider in session.json: how dev answers it and where.
type devProvider struct {
	Mode string `json:"mode"`
	// URL is the baseUrl the dev runtime file gives the provider (for a real one, as
	// runtime-snippet.yaml writes it).
	URL string `json:"url"`
	// Cases are the golden case files that answer its sends, in the order they are tried.
	Cases []string `json:"cases,omitempty"`
}

// devHTTP is the dev stack's http providers: their stand-ins, runtime entries and banner lines.
type devHTTP struct {
	providers map[string]devProvider
	entries   map[string]map[string]any
	lines     []string // one per provider, for the banner
	env       bool     // a real provider reads secrets from the environment
	closers   []func()
}

// close stops every stand-in.
func (h *devHTTP) close() {
	for _, c := range h.closers {
		c()
	}
}

// startDevHTTP starts a stand-in for each http provider of the package: the golden cases'
// stand-in when providers/ID/testdata holds cases, else a mock push gateway when its
// runtime-snippet.yaml authenticates as FCM or APNs do, the mock gateway otherwise, none for a
// provider named by --real (it gets its runtime-snippet.yaml entry, secrets from the
// environment).
func startDevHTTP(pkg *packages.Package, l devPaths, apiURL string, real []string, getenv func(string) string, log *slog.Logger) (*devHTTP, error) {
	h := &devHTTP{providers: map[string]devProvider{}, entries: map[string]map[string]any{}}
	wantReal := map[string]bool{}
	for _, id := range real {
		switch p := pkg.Provider(id); {
		case p == nil:
			return nil, usageError(fmt.Errorf("--real %s: the package has no http provider %q", id, id))
		case p.Kind != "http":
			return nil, usageError(fmt.Errorf("--real %s: provider %s is kind %s; --real takes http providers only", id, id, p.Kind))
		}
		wantReal[id] = true
	}
	for _, p := range pkg.Providers {
		if p.Kind != "http" {
			continue
		}
		dir := filepath.Join(pkg.Root, "providers", p.ID)
		callbackURL := apiURL + "/v1/provider-callbacks/" + p.ID
		var err error
		cases, _ := filepath.Glob(filepath.Join(dir, "testdata", "*.txtar"))
		switch push := pushMockFor(dir); {
		case wantReal[p.ID]:
			err = h.addReal(p, dir, getenv)
		case len(cases) > 0:
			err = h.addCases(p, dir, callbackURL, l, log)
		case push != "":
			err = h.addPush(p, push, l, log)
		default:
			err = h.addMock(p, callbackURL, l, log, "no golden cases")
		}
		if err != nil {
			h.close()
			return nil, err
		}
	}
	return h, nil
}

// devVerifier is the callback verifier the dev runtime file gives a stand-in's provider.
func devVerifier() map[string]string {
	return map[string]string{"kind": httpgw.VerifierHMACSHA256Body, "header": "x-signature", "encoding": "hex",
		"secretRef": "secret:file/callback-secret"}
}

// addMock points the provider at a mock gateway of its own.
func (h *devHTTP) addMock(p *packages.Provider, callbackURL string, l devPaths, log *slog.Logger, why string) error {
	opts := mockgw.Options{Latency: 0, ReceiptDelay: devCallbackDelay,
		Logger: log.With("component", "mock-gateway", "provider", p.ID)}
	if p.Adapter.TakesCallbacks() { // without callbacks the gateway posts no reports
		opts.CallbackURL, opts.CallbackSecret = callbackURL, l.callbackSecret
	}
	gw := mockgw.New(opts)
	gwURL, err := gw.Start("127.0.0.1:0")
	if err != nil {
		return environment("listener.failed", "mock gateway", err)
	}
	h.closers = append(h.closers, func() { _ = gw.Close() })
	url := strings.TrimSuffix(gwURL, "/")
	h.providers[p.ID] = devProvider{Mode: devModeMock, URL: url + "/"}
	h.lines = append(h.lines, fmt.Sprintf("%s: mock gateway %s (the quickstart's protocol only); %s: "+
		"write providers/%s/testdata/*.txtar (switchboard adapter init) or run with --real %s", p.ID, url, why, p.ID, p.ID))
	h.entries[p.ID] = standInEntry(p, url+"/", nil)
	return nil
}

// addCases points the provider at a stand-in that answers as its golden cases say.
func (h *devHTTP) addCases(p *packages.Provider, dir, callbackURL string, l devPaths, log *slog.Logger) error {
	opts := adaptertest.StandInOptions{CallbackURL: callbackURL, CallbackDelay: devCallbackDelay,
		Logger: log.With("component", "golden-cases", "provider", p.ID)}
	if p.Adapter.TakesCallbacks() {
		v := devVerifier()
		opts.Verifier = &httpgw.VerifierConfig{Kind: v["kind"], Header: v["header"], Encoding: v["encoding"], Secret: l.callbackSecret}
	}
	s, err := adaptertest.NewStandIn(dir, opts)
	if errors.Is(err, adaptertest.ErrNoSends) {
		return h.addMock(p, callbackURL, l, log, "none of its golden cases answers a send")
	}
	if err != nil {
		return refused("dev.case-invalid", filepath.Join("providers", p.ID),
			fmt.Sprintf("%v; `switchboard adapter test providers/%s` shows every problem", err, p.ID))
	}
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		return environment("listener.failed", "golden-case stand-in", err)
	}
	h.closers = append(h.closers, s.Close)
	h.providers[p.ID] = devProvider{Mode: devModeCases, URL: s.BaseURL(), Cases: s.Cases()}
	h.lines = append(h.lines, fmt.Sprintf("%s: answered as its golden cases say (%s), at %s",
		p.ID, strings.Join(s.Cases(), ", "), s.BaseURL()))
	h.entries[p.ID] = standInEntry(p, s.BaseURL(), s.Parameters())
	return nil
}

// standInEntry is the runtime entry of a provider that a local stand-in answers.
func standInEntry(p *packages.Provider, baseURL string, params map[string]string) map[string]any {
	entry := map[string]any{"kind": "http", "baseUrl": baseURL, "authentication": map[string]string{"kind": "none"}}
	if len(params) > 0 {
		entry["parameters"] = params
	}
	if p.Adapter.TakesCallbacks() { // a verifier for an adapter without callbacks is refused
		entry["callbackVerifier"] = devVerifier()
	}
	return entry
}

// snippetFile is runtime-snippet.yaml: a runtime file's providers member with one entry.
type snippetFile struct {
	Providers map[string]map[string]any `yaml:"providers"`
}

// addReal gives the provider its entry of providers/ID/runtime-snippet.yaml, with every
// secret:file/NAME read from the environment variable envSecretName(NAME) instead.
func (h *devHTTP) addReal(p *packages.Provider, dir string, getenv func(string) string) error {
	path := filepath.Join(dir, "runtime-snippet.yaml")
	rel := filepath.Join("providers", p.ID, "runtime-snippet.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		return refused("dev.real-unconfigured", rel, fmt.Sprintf("--real %s needs the provider's runtime entry in %s "+
			"(switchboard adapter init writes one; or copy the provider's entry from your runtime file): %v", p.ID, rel, err))
	}
	var sf snippetFile
	if err := yaml.Unmarshal(raw, &sf); err != nil || len(sf.Providers) != 1 {
		return refused("dev.real-unconfigured", rel, "must hold `providers:` with exactly one http provider entry")
	}
	var entry map[string]any
	for _, e := range sf.Providers {
		entry = e
	}
	vars := map[string]string{} // variable → what needs it
	entry = realSecrets(entry, vars).(map[string]any)
	var missing []string
	for name, what := range vars {
		if getenv(name) == "" {
			missing = append(missing, name+" ("+what+")")
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return environment("dev.secret-missing", "--real "+p.ID,
			fmt.Errorf("set %s: --real takes the provider's secrets from the environment", strings.Join(missing, ", ")))
	}
	base, _ := entry["baseUrl"].(string)
	h.env = true
	h.providers[p.ID] = devProvider{Mode: devModeReal, URL: base}
	h.lines = append(h.lines, fmt.Sprintf("%s: the real gateway %s (--real; its secrets from the environment)", p.ID, base))
	h.entries[p.ID] = entry
	return nil
}

// varPattern finds the ${NAME} substitutions without a default in a runtime file's string.
var varPattern = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// realSecrets rewrites secret:file/NAME to secret:env/ENV_NAME in a snippet's values and
// records in vars each environment variable the entry needs (its secrets and its ${NAME}s).
func realSecrets(v any, vars map[string]string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = realSecrets(e, vars)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = realSecrets(e, vars)
		}
		return x
	case string:
		if name, ok := strings.CutPrefix(x, "secret:file/"); ok {
			env := envSecretName(name)
			vars[env] = "secret " + name
			return "secret:env/" + env
		}
		if name, ok := strings.CutPrefix(x, "secret:env/"); ok {
			vars[name] = "secret:env/" + name
		}
		for _, m := range varPattern.FindAllStringSubmatch(x, -1) {
			vars[m[1]] = "${" + m[1] + "}"
		}
	}
	return v
}

// envSecretName is the environment variable that holds secret file NAME under --real: upper
// case, each character other than a letter, digit or _ made _ (twilio-auth-token:
// TWILIO_AUTH_TOKEN).
func envSecretName(name string) string {
	b := []byte(strings.ToUpper(name))
	for i, c := range b {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}
