package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"switchboard/engine/auth"
	"switchboard/engine/enginetest"
	"switchboard/engine/runtime"
	"switchboard/engine/stdwebhook"
	"switchboard/packages"
	"switchboard/providers/httpgw/mockgw"
)

// apiEnv is an in-process stack on a copy of the quickstart: real SQLite file, real tokens,
// the real mock gateway, an httptest server in front of the real API handler, a fake clock.
type apiEnv struct {
	t      testing.TB
	dir    string
	stack  *stack
	srv    *httptest.Server
	gw     *mockgw.Gateway
	issuer *auth.DevIssuer
	clock  *enginetest.FakeClock
	cancel context.CancelFunc
	done   chan struct{}
	push   *devHTTP // the mock push gateways (envOptions.pushMocks)
}

type envOptions struct {
	// edit changes files of the package copy before it is loaded (path relative to the package).
	edit map[string]func(string) string
	// dispatch runs the dispatcher; without it messages stay queued.
	dispatch bool
	// concurrency overrides dispatch.concurrency (workers per provider lane).
	concurrency int
	// runtime changes the dev runtime file's document before it is loaded.
	runtime func(doc map[string]any)
	// webhookURL, when set, subscribes an endpoint at that URL to every access profile (the dev
	// runtime's dev-receiver, with its secret); the delivery worker runs with the dispatcher.
	webhookURL string
	// noReports: the mock gateway posts no delivery reports (a test posts its own).
	noReports bool
	// pushMocks answers the package's push providers (fcm, apns) with the mock push gateways
	// dev runs, instead of the mock gateway.
	pushMocks bool
}

func newAPIEnv(t testing.TB, opts envOptions) *apiEnv {
	t.Helper()
	dir := quickstartCopy(t)
	for rel, f := range opts.edit {
		p := filepath.Join(dir, rel)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("edit %s: %v", rel, err)
		}
		if err := os.WriteFile(p, []byte(f(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pkg, err := loadPackage(dir)
	if err != nil {
		t.Fatalf("load package: %v", err)
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		t.Fatalf("dev dir: %v", err)
	}
	e := &apiEnv{t: t, dir: dir, clock: enginetest.NewFakeClock(time.Now()), done: make(chan struct{})}
	var handler http.Handler = http.NotFoundHandler()
	var mu sync.RWMutex
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.RLock()
		h := handler
		mu.RUnlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(e.srv.Close)
	callbacks := e.srv.URL + "/v1/provider-callbacks/sms-gateway"
	if opts.noReports {
		callbacks = ""
	}
	e.gw = mockgw.New(mockgw.Options{CallbackURL: callbacks,
		CallbackSecret: layout.callbackSecret, ReceiptDelay: time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	gwURL, err := e.gw.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.gw.Close() })
	session := devSession{API: e.srv.URL, Gateways: oneMockForAll(pkg, gwURL), Clients: clientsOf(pkg)}
	if opts.pushMocks {
		e.push = startPushMocks(t, pkg, layout)
		session.httpEntries = e.push.entries
	}
	if opts.webhookURL != "" {
		session.WebhookReceiver = &devReceiver{URL: opts.webhookURL, Endpoint: devWebhookEndpoint}
	}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		t.Fatal(err)
	}
	if opts.concurrency > 0 {
		raw, _ := os.ReadFile(layout.runtimePath)
		was := "concurrency: " + strconv.Itoa(runtime.DefaultConcurrency)
		if !strings.Contains(string(raw), was) {
			t.Fatalf("the dev runtime file holds no %q", was)
		}
		edited := strings.Replace(string(raw), was, "concurrency: "+strconv.Itoa(opts.concurrency), 1)
		if err := os.WriteFile(layout.runtimePath, []byte(edited), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if opts.runtime != nil {
		editRuntime(t, layout.runtimePath, filepath.Base(layout.runtimePath), opts.runtime)
	}
	rt, pkg, err := loadRuntime(layout.runtimePath, func(string) string { return "" })
	if err != nil {
		t.Fatalf("load runtime: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	e.stack, err = buildStack(ctx, rt, pkg, slog.New(slog.DiscardHandler), e.clock, true)
	if err != nil {
		t.Fatalf("build stack: %v", err)
	}
	mu.Lock()
	handler = e.stack.api.Handler()
	mu.Unlock()
	if e.issuer, err = auth.LoadDevIssuer(layout.issuerKeyPath, devIssuer, devAudience); err != nil {
		t.Fatal(err)
	}
	if opts.dispatch {
		go func() {
			defer close(e.done)
			if e.stack.webhooks != nil {
				go e.stack.webhooks.Run(ctx)
			}
			_ = e.stack.dispatcher.Run(ctx)
		}()
	} else {
		close(e.done)
	}
	t.Cleanup(func() {
		cancel()
		<-e.done
		e.stack.close()
	})
	return e
}

// webhookKey is the HMAC key of the dev runtime's webhook endpoint (envOptions.webhookURL).
func (e *apiEnv) webhookKey() []byte {
	e.t.Helper()
	secret, err := os.ReadFile(filepath.Join(devLayout(e.dir).secrets, devWebhookSecret))
	if err != nil {
		e.t.Fatal(err)
	}
	key, ok := stdwebhook.DecodeSecret(string(secret))
	if !ok {
		e.t.Fatalf("%s is not a whsec_ secret", devWebhookSecret)
	}
	return key
}

// newAPIEnvB is newAPIEnv for benchmarks, without the dispatcher.
func newAPIEnvB(b *testing.B) *apiEnv { return newAPIEnv(b, envOptions{}) }

// token mints a token for a client with its profile's scopes, at the fake clock's time.
func (e *apiEnv) token(client string) string {
	e.t.Helper()
	var scopes []string
	if p := e.stack.pkg.ProfileForClient(client); p != nil {
		scopes = p.RequiredScopes
	}
	tok, err := e.issuer.Mint(client, scopes, time.Hour, e.clock.Now())
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// request is one API call.
type request struct {
	method, path, token, key, contentType string
	body                                  any // marshalled as JSON unless it is []byte
	header                                map[string]string
}

// answer is one API answer.
type answer struct {
	status int
	header http.Header
	raw    []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(a.raw, &v); err != nil {
		t.Fatalf("decode %q: %v", a.raw, err)
	}
	return v
}

func (e *apiEnv) do(r request) answer {
	e.t.Helper()
	var body io.Reader
	switch b := r.body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, _ := json.Marshal(b)
		body = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(r.method, e.srv.URL+r.path, body)
	if r.body != nil {
		ct := r.contentType
		if ct == "" {
			ct = "application/json"
		}
		req.Header.Set("Content-Type", ct)
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	if r.key != "" {
		req.Header.Set("Idempotency-Key", r.key)
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, raw: raw}
}

// openAPI validates bodies against the served OpenAPI document's component schemas.
type openAPI struct {
	schemas map[string]*jsonschema.Schema
}

func loadOpenAPI(t *testing.T, raw []byte) *openAPI {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	o := &openAPI{schemas: map[string]*jsonschema.Schema{}}
	for _, name := range []string{"Problem", "Accepted", "MessageView", "Preview", "Ready", "Health",
		"MessageList", "MessageJournal", "OperationPreview", "OperationStarted", "Operation", "Figures", "JournalVerification", "Slo"} {
		s, err := c.Compile("mem:///openapi.json#/components/schemas/" + name)
		if err != nil {
			t.Fatalf("compile %s: %v", name, err)
		}
		o.schemas[name] = s
	}
	return o
}

// check validates an answer's body against a named schema.
func (o *openAPI) check(t *testing.T, schema string, raw []byte) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("body %q is not JSON: %v", raw, err)
	}
	if err := o.schemas[schema].Validate(v); err != nil {
		t.Fatalf("body does not match %s: %v\n%s", schema, err, raw)
	}
}

// oneMockForAll points every http provider of pkg at one mock gateway, which serves the SMS and
// the chat endpoints.
func oneMockForAll(pkg *packages.Package, gwURL string) map[string]string {
	out := map[string]string{}
	for _, p := range pkg.Providers {
		if p.Kind == "http" {
			out[p.ID] = strings.TrimSuffix(gwURL, "/")
		}
	}
	return out
}
