package wiring

import (
	"net/url"
	"testing"
	"time"

	"switchboard/engine/runtime"
	"switchboard/packages"
)

// handRuntime is a runtime with one http provider "sms" connected over OAuth 2.0, with a
// verifier and lowered sandbox limits.
func handRuntime(t *testing.T) (*runtime.Runtime, *packages.Provider) {
	t.Helper()
	base, _ := url.Parse("https://sms.example/api/")
	token, _ := url.Parse("https://id.example/token")
	rt := &runtime.Runtime{
		Sandbox: runtime.Sandbox{SourceBytes: 4096, PrepareMilliseconds: 50, ReceiptMilliseconds: 20},
		Providers: map[string]*runtime.ProviderConfig{"sms": {ID: "sms", Kind: runtime.KindHTTP, HTTP: &runtime.HTTPProvider{
			BaseURL: base, Timeout: 3 * time.Second, MaximumResponseBytes: 1024, ConcurrencyLimit: 4, RatePerSecond: 50,
			Authentication: runtime.HTTPAuth{Kind: runtime.AuthOAuth2ClientCredentials, TokenURL: token, ClientID: "client",
				ClientSecret: runtime.NewSecret("secret:env/S", []byte("client-secret")), Scopes: []string{"sms:send"}},
			CallbackVerifier: &runtime.Verifier{Kind: runtime.VerifierHMACSHA256Body, Header: "x-signature", Encoding: "hex",
				Secret: runtime.NewSecret("secret:env/H", []byte("hmac-key"))},
		}}},
	}
	decl := &packages.Provider{ID: "sms", Kind: "http", IdempotentSubmit: true, Adapter: &packages.Adapter{
		ScriptPath: "providers/sms/adapter.js", Source: "function prepare(m, p) { return {target: 'x'} }",
		Method: "POST", RequestHeaders: []string{"content-type"}, Receipts: "callback", ConcurrencyLimit: 16, RatePerSecond: 30,
	}}
	return rt, decl
}

func TestHTTPConfigMapsEveryMember(t *testing.T) {
	t.Parallel()
	rt, decl := handRuntime(t)
	var seen []string
	cfg, err := HTTPConfig(rt, decl, Options{Observer: func(id, event, class string) { seen = append(seen, id+" "+event+" "+class) }})
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Auth
	if a.Kind != "oauth2-client-credentials" || a.TokenURL != "https://id.example/token" || a.ClientID != "client" ||
		a.ClientSecret != "client-secret" || len(a.Scopes) != 1 {
		t.Errorf("Auth = %+v", a)
	}
	if v := cfg.Verifier; v == nil || v.Kind != "hmac-sha256-body" || string(v.Secret) != "hmac-key" || v.Header != "x-signature" {
		t.Errorf("Verifier = %+v", v)
	}
	if cfg.ConcurrencyLimit != 4 || cfg.RatePerSecond != 30 || !cfg.IdempotentSubmit || !cfg.ReceiptsCallback {
		t.Errorf("limits: concurrency %d rate %g idempotent %t receipts %t", cfg.ConcurrencyLimit, cfg.RatePerSecond, cfg.IdempotentSubmit, cfg.ReceiptsCallback)
	}
	if cfg.Limits.SourceBytes != 4096 || cfg.Limits.Deadlines["prepare"] != 50*time.Millisecond ||
		cfg.Limits.Deadlines["receipt"] != 20*time.Millisecond {
		t.Errorf("Limits = %+v", cfg.Limits)
	}
	cfg.Observer("callback", "parsed")
	if len(seen) != 1 || seen[0] != "sms callback parsed" {
		t.Errorf("observer saw %v", seen)
	}
}

func TestHTTPConfigRefusesWhatIsNotHTTP(t *testing.T) {
	t.Parallel()
	rt, decl := handRuntime(t)
	if _, err := HTTPConfig(rt, &packages.Provider{ID: "sms", Kind: "smtp"}, Options{}); err == nil {
		t.Error("an smtp declaration was mapped")
	}
	delete(rt.Providers, "sms")
	if _, err := HTTPConfig(rt, decl, Options{}); err == nil {
		t.Error("a provider the runtime does not connect was mapped")
	}
}
