package wiring

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"switchboard/engine/runtime"
	"switchboard/packages"
	"switchboard/providers/httpgw"
)

// handRuntime is a runtime with one http provider "sms" connected over OAuth 2.0, with a
// verifier and lowered sandbox limits.
func handRuntime(t *testing.T) (*runtime.Runtime, *packages.Provider) {
	t.Helper()
	base, _ := url.Parse("https://sms.example/api/")
	token, _ := url.Parse("https://id.example/token")
	public, _ := url.Parse("https://sb.example/")
	rt := &runtime.Runtime{
		PublicURL: public,
		Sandbox:   runtime.Sandbox{SourceBytes: 4096, PrepareMilliseconds: 50, ReceiptMilliseconds: 20},
		Providers: map[string]*runtime.ProviderConfig{"sms": {ID: "sms", Kind: runtime.KindHTTP, HTTP: &runtime.HTTPProvider{
			BaseURL: base, Timeout: 3 * time.Second, Parameters: map[string]string{"accountId": "AC1"}, MaximumResponseBytes: 1024, ConcurrencyLimit: 4, RatePerSecond: 50,
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
	if cfg.CallbackURL != "https://sb.example/v1/provider-callbacks/sms" || cfg.Parameters["accountId"] != "AC1" {
		t.Errorf("CallbackURL %q, Parameters %v", cfg.CallbackURL, cfg.Parameters)
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

func TestHTTPConfigMapsSigV4AndTheNewVerifiers(t *testing.T) {
	t.Parallel()
	rt, decl := handRuntime(t)
	h := rt.Providers["sms"].HTTP
	h.Authentication = runtime.HTTPAuth{Kind: runtime.AuthAWSSigV4, Service: "sns", Region: "eu-west-1",
		AccessKeyID: runtime.NewSecret("r", []byte("AKID")), SecretAccessKey: runtime.NewSecret("r", []byte("sk")),
		SessionToken: runtime.NewSecret("r", []byte("tok"))}
	h.CallbackVerifier = &runtime.Verifier{Kind: runtime.VerifierBasic, Username: runtime.NewSecret("r", []byte("u")),
		Password: runtime.NewSecret("r", []byte("p"))}
	cfg, err := HTTPConfig(rt, decl, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if a := cfg.Auth; a.Kind != "aws-sigv4" || a.Service != "sns" || a.Region != "eu-west-1" || a.AccessKeyID != "AKID" ||
		a.SecretAccessKey != "sk" || a.SessionToken != "tok" {
		t.Errorf("Auth = %+v", a)
	}
	if v := cfg.Verifier; v.Kind != "basic" || v.Username != "u" || v.Password != "p" {
		t.Errorf("Verifier = %+v", v)
	}
	h.CallbackVerifier = &runtime.Verifier{Kind: runtime.VerifierEd25519, SignatureHeader: "x-s", TimestampHeader: "x-t", PublicKey: []byte{1, 2}}
	cfg, _ = HTTPConfig(rt, decl, Options{})
	if v := cfg.Verifier; v.SignatureHeader != "x-s" || v.TimestampHeader != "x-t" || len(v.PublicKey) != 2 {
		t.Errorf("ed25519 Verifier = %+v", v)
	}
}

// TestEveryVerifierTheRuntimeTakesIsImplemented: the runtime file and the http provider name
// the same callback verifier kinds (each keeps its own list, since neither may import the other).
func TestEveryVerifierTheRuntimeTakesIsImplemented(t *testing.T) {
	t.Parallel()
	if got, want := httpgw.VerifierKinds(), runtime.VerifierKinds(); !slices.Equal(got, want) {
		t.Fatalf("the http provider implements %v; the runtime file takes %v", got, want)
	}
}
