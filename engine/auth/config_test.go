package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/engine/auth/authtest"
	"switchboard/engine/enginetest"
)

func TestNewVerifierConfig(t *testing.T) {
	t.Parallel()
	valid := func() Config {
		return Config{Issuer: testIssuer, Audience: testAudience, JWKSURI: "https://id.example/jwks",
			AllowedClients: []string{testClient}}
	}
	cases := []struct {
		name    string
		edit    func(c *Config)
		wantErr string // "" means accepted
	}{
		{name: "https", edit: func(*Config) {}},
		{name: "http on 127.0.0.1", edit: func(c *Config) { c.JWKSURI = "http://127.0.0.1:8080/jwks" }},
		{name: "http on 127.1.2.3", edit: func(c *Config) { c.JWKSURI = "http://127.1.2.3/jwks" }},
		{name: "http on ::1", edit: func(c *Config) { c.JWKSURI = "http://[::1]:9000/jwks" }},
		{name: "http on localhost", edit: func(c *Config) { c.JWKSURI = "http://localhost/jwks" }},
		{name: "http on a public host", edit: func(c *Config) { c.JWKSURI = "http://id.example/jwks" }, wantErr: "https"},
		{name: "http on a private address", edit: func(c *Config) { c.JWKSURI = "http://10.0.0.5/jwks" }, wantErr: "https"},
		{name: "http on a name that starts like loopback", edit: func(c *Config) { c.JWKSURI = "http://127.0.0.1.evil.example/jwks" }, wantErr: "https"},
		{name: "ftp", edit: func(c *Config) { c.JWKSURI = "ftp://id.example/jwks" }, wantErr: "https"},
		{name: "relative", edit: func(c *Config) { c.JWKSURI = "/jwks" }, wantErr: "absolute"},
		{name: "credentials in the URL", edit: func(c *Config) { c.JWKSURI = "https://u:p@id.example/jwks" }, wantErr: "credentials"},
		{name: "no key source", edit: func(c *Config) { c.JWKSURI = "" }, wantErr: "one of jwksUri and jwksFile"},
		{name: "both key sources", edit: func(c *Config) { c.JWKSFile = "jwks.json" }, wantErr: "exclusive"},
		{name: "no issuer", edit: func(c *Config) { c.Issuer = "" }, wantErr: "issuer"},
		{name: "no audience", edit: func(c *Config) { c.Audience = " " }, wantErr: "audience"},
		{name: "no clients", edit: func(c *Config) { c.AllowedClients = nil }, wantErr: "allowedClients"},
		{name: "empty client", edit: func(c *Config) { c.AllowedClients = []string{""} }, wantErr: "allowedClients"},
		{name: "negative leeway", edit: func(c *Config) { c.Leeway = -time.Second }, wantErr: "leeway"},
		{name: "huge leeway", edit: func(c *Config) { c.Leeway = time.Hour }, wantErr: "leeway"},
		{name: "token types in any case", edit: func(c *Config) { c.TokenTypes = []string{"Application/AT+JWT", "jwt", "UNTYPED"} }},
		{name: "unknown token type", edit: func(c *Config) { c.TokenTypes = []string{"at+jwt", "id+jwt"} }, wantErr: "tokenTypes"},
		{name: "audience an allowed client with JWT", edit: func(c *Config) {
			c.TokenTypes = []string{"JWT"}
			c.Audience = testClient
		}, wantErr: "audience must not be an allowed client"},
		{name: "audience an allowed client with at+jwt only", edit: func(c *Config) { c.Audience = testClient }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := valid()
			tc.edit(&c)
			v, err := NewVerifier(c, enginetest.NewFakeClock(testStart))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("accepted %+v", c)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q does not mention %q", err, tc.wantErr)
			}
			if v != nil && (v.cfg.ScopeClaim != DefaultScopeClaim || v.cfg.ClientClaim != DefaultClientClaim ||
				v.cfg.Leeway != DefaultLeeway || v.cfg.HTTPClient == nil || len(v.cfg.TokenTypes) == 0) {
				t.Fatalf("defaults not applied: %+v", v.cfg)
			}
		})
	}
	if _, err := NewVerifier(valid(), nil); err == nil {
		t.Fatal("a nil clock was accepted")
	}
}

func TestDefaultClientRefusesRedirectToPlainHTTP(t *testing.T) {
	t.Parallel()
	key := testKey(t, "eddsa-1")
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/good":
			http.Redirect(w, r, "/jwks", http.StatusFound)
		case "/bad":
			http.Redirect(w, r, "http://id.example/jwks", http.StatusFound)
		case "/jwks":
			hits.Add(1)
			_, _ = w.Write(authtest.JWKS(key))
		}
	}))
	t.Cleanup(srv.Close)
	for _, path := range []string{"/good", "/bad"} {
		v, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience, JWKSURI: srv.URL + path,
			AllowedClients: []string{testClient}}, enginetest.NewFakeClock(testStart))
		if err != nil {
			t.Fatal(err)
		}
		if v.cfg.HTTPClient.Timeout != jwksHTTPTimeout {
			t.Fatalf("timeout = %s", v.cfg.HTTPClient.Timeout)
		}
		// Trust the test server's certificate, keep the default client's redirect rule.
		v.cfg.HTTPClient.Transport = srv.Client().Transport
		err = v.Refresh(context.Background())
		if path == "/good" && err != nil {
			t.Fatalf("https redirect refused: %v", err)
		}
		if path == "/bad" && (err == nil || !strings.Contains(err.Error(), "https")) {
			t.Fatalf("redirect to plain http: err = %v", err)
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("JWKS served %d times, want 1", hits.Load())
	}
}
