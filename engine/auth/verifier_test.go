package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/auth/authtest"
)

func TestAuthenticateAcceptsEveryAlgorithm(t *testing.T) {
	t.Parallel()
	for _, kid := range []string{"rs256-1", "es256-1", "eddsa-1"} {
		t.Run(kid, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			tok := testKey(t, kid).MustMint(t, f.claims("messaging:send", "messaging:operate"), nil)
			p, err := f.auth(tok)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			want := Principal{
				Issuer: testIssuer, Subject: testClient, ClientID: testClient,
				Scopes:    []string{"messaging:send", "messaging:operate"},
				ExpiresAt: testStart.Add(testTTL),
			}
			if p.Issuer != want.Issuer || p.Subject != want.Subject || p.ClientID != want.ClientID ||
				!p.ExpiresAt.Equal(want.ExpiresAt) || strings.Join(p.Scopes, " ") != strings.Join(want.Scopes, " ") {
				t.Fatalf("principal = %+v, want %+v", *p, want)
			}
			if p.Caller() != testIssuer+"\x00"+testClient {
				t.Fatalf("Caller() = %q", p.Caller())
			}
		})
	}
}

func TestAuthenticateAcceptsVariants(t *testing.T) {
	t.Parallel()
	key := testKey(t, "eddsa-1")
	cases := []struct {
		name   string
		claims func(c map[string]any)
		header map[string]any
		scopes []string
	}{
		{name: "typ application/at+jwt in upper case", header: map[string]any{"typ": "application/AT+JWT"},
			scopes: []string{"messaging:send"}},
		{name: "scopes as an array", claims: func(c map[string]any) { c["scope"] = []string{"a", "b"} },
			scopes: []string{"a", "b"}},
		{name: "audience as an array", claims: func(c map[string]any) { c["aud"] = []string{"other", testAudience} },
			scopes: []string{"messaging:send"}},
		{name: "no scope claim", claims: func(c map[string]any) { delete(c, "scope") }},
		{name: "no kid: every fitting key is tried", header: map[string]any{"kid": nil},
			scopes: []string{"messaging:send"}},
		{name: "no nbf and no iat", claims: func(c map[string]any) { delete(c, "nbf"); delete(c, "iat") },
			scopes: []string{"messaging:send"}},
		{name: "nbf within the leeway", claims: func(c map[string]any) { c["nbf"] = testStart.Add(20 * time.Second).Unix() },
			scopes: []string{"messaging:send"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			c := f.claims()
			if tc.claims != nil {
				tc.claims(c)
			}
			p, err := f.auth(key.MustMint(t, c, tc.header))
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if strings.Join(p.Scopes, " ") != strings.Join(tc.scopes, " ") {
				t.Fatalf("scopes = %q, want %q", p.Scopes, tc.scopes)
			}
		})
	}
}

func TestAuthenticateRefusesWithoutCredentials(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, h := range []string{"", "   ", "Basic dXNlcjpwYXNz", "Bearertoken", "Token abc.def.ghi"} {
		_, err := f.v.Authenticate(context.Background(), h)
		var p *engine.Problem
		if !errors.As(err, &p) || p.Code != engine.CodeAuthenticationRefused {
			t.Fatalf("header %q: err = %v, want authentication.refused", h, err)
		}
		if got := WWWAuthenticate(err); got != `Bearer realm="switchboard"` {
			t.Fatalf("header %q: WWWAuthenticate = %q, want a challenge without error", h, got)
		}
	}
	if f.jwks.Hits() != 0 {
		t.Fatalf("requests without a token fetched the JWKS %d times", f.jwks.Hits())
	}
}

func TestAuthenticateRefusals(t *testing.T) {
	t.Parallel()
	rsa := testKey(t, "rs256-1")
	ed := testKey(t, "eddsa-1")
	b64 := base64.RawURLEncoding.EncodeToString
	cases := []struct {
		name   string
		header string // the whole Authorization value, when set
		token  func(f *fixture) string
		detail string
	}{
		{name: "empty bearer", header: "Bearer ", detail: detailMissing},
		{name: "garbage", header: "Bearer garbage", detail: detailMalformed},
		{name: "two segments", header: "Bearer " + b64([]byte(`{"alg":"EdDSA"}`)) + "." + b64([]byte(`{}`)), detail: detailMalformed},
		{name: "four segments", header: "Bearer a.b.c.d", detail: detailMalformed},
		{name: "bad base64 characters", header: "Bearer a+b.c/d.e=f", detail: detailMalformed},
		{name: "bad base64 length", header: "Bearer a.b.c", detail: detailMalformed},
		{name: "header not JSON", header: "Bearer " + b64([]byte("nope")) + "." + b64([]byte("{}")) + ".c2ln", detail: detailMalformed},
		{name: "too long", header: "Bearer " + strings.Repeat("a", maxTokenBytes) + ".b.c", detail: detailTooLong},
		{name: "alg none", token: func(f *fixture) string { return authtest.SignNone(f.claims()) }, detail: detailAlgorithm},
		{name: "alg none without signature segment content but with kid", token: func(f *fixture) string {
			return authtest.Forge(map[string]any{"alg": "none", "typ": "at+jwt", "kid": "rs256-1"}, f.claims(), nil)
		}, detail: detailAlgorithm},
		{name: "HS256 keyed with the public key", token: func(f *fixture) string {
			return authtest.SignHMAC(rsa.PublicKeyPEM(), "rs256-1", f.claims())
		}, detail: detailAlgorithm},
		{name: "HS512", token: func(f *fixture) string {
			return authtest.Forge(map[string]any{"alg": "HS512", "typ": "at+jwt"}, f.claims(), []byte("sig"))
		}, detail: detailAlgorithm},
		{name: "typ JWT", token: func(f *fixture) string {
			return ed.MustMint(t, f.claims(), map[string]any{"typ": "JWT"})
		}, detail: detailType},
		{name: "typ missing", token: func(f *fixture) string {
			return ed.MustMint(t, f.claims(), map[string]any{"typ": nil})
		}, detail: detailType},
		{name: "typ not a string", token: func(f *fixture) string {
			return ed.MustMint(t, f.claims(), map[string]any{"typ": 7})
		}, detail: detailType},
		{name: "wrong issuer", token: claimsEdit(ed, func(c map[string]any) { c["iss"] = "https://evil.example" }), detail: detailIssuer},
		{name: "wrong audience", token: claimsEdit(ed, func(c map[string]any) { c["aud"] = "other" }), detail: detailAudience},
		{name: "no audience", token: claimsEdit(ed, func(c map[string]any) { delete(c, "aud") }), detail: detailAudience},
		{name: "expired", token: claimsEdit(ed, func(c map[string]any) { c["exp"] = testStart.Add(-time.Minute).Unix() }), detail: detailExpired},
		{name: "expired just beyond the leeway", token: claimsEdit(ed, func(c map[string]any) {
			c["exp"] = testStart.Add(-DefaultLeeway).Unix()
		}), detail: detailExpired},
		{name: "no expiry", token: claimsEdit(ed, func(c map[string]any) { delete(c, "exp") }), detail: detailNoExpiry},
		{name: "not yet valid", token: claimsEdit(ed, func(c map[string]any) { c["nbf"] = testStart.Add(time.Hour).Unix() }), detail: detailNotYetValid},
		{name: "issued in the future", token: claimsEdit(ed, func(c map[string]any) { c["iat"] = testStart.Add(time.Hour).Unix() }), detail: detailIssuedInFuture},
		{name: "missing sub", token: claimsEdit(ed, func(c map[string]any) { delete(c, "sub") }), detail: detailNoSubject},
		{name: "empty sub", token: claimsEdit(ed, func(c map[string]any) { c["sub"] = "" }), detail: detailNoSubject},
		{name: "sub not a string", token: claimsEdit(ed, func(c map[string]any) { c["sub"] = 42 }), detail: detailClaims},
		{name: "exp not a number", token: claimsEdit(ed, func(c map[string]any) { c["exp"] = "tomorrow" }), detail: detailClaims},
		{name: "client not allowed", token: claimsEdit(ed, func(c map[string]any) { c["client_id"] = "intruder" }), detail: detailClient},
		{name: "client missing", token: claimsEdit(ed, func(c map[string]any) { delete(c, "client_id") }), detail: detailClient},
		{name: "client not a string", token: claimsEdit(ed, func(c map[string]any) { c["client_id"] = []string{testClient} }), detail: detailClient},
		{name: "scope not a string or array", token: claimsEdit(ed, func(c map[string]any) { c["scope"] = 3 }), detail: detailScopeClaim},
		{name: "scope array with a number", token: claimsEdit(ed, func(c map[string]any) { c["scope"] = []any{"a", 1} }), detail: detailScopeClaim},
		{name: "unknown kid", token: func(f *fixture) string {
			return ed.WithKID("nobody").MustMint(t, f.claims(), nil)
		}, detail: detailUnknownKey},
		{name: "kid of a key of another algorithm", token: func(f *fixture) string {
			return ed.MustMint(t, f.claims(), map[string]any{"kid": "rs256-1", "alg": "RS256"})
		}, detail: detailSignature},
		{name: "signature of another key under a known kid", token: func(f *fixture) string {
			return testKey(t, "eddsa-2").WithKID("eddsa-1").MustMint(t, f.claims(), nil)
		}, detail: detailSignature},
		{name: "payload changed after signing", token: func(f *fixture) string {
			parts := strings.Split(ed.MustMint(t, f.claims(), nil), ".")
			c := f.claims()
			c["sub"] = "someone-else"
			forged := authtest.Forge(map[string]any{}, c, nil)
			parts[1] = strings.Split(forged, ".")[1]
			return strings.Join(parts, ".")
		}, detail: detailSignature},
		{name: "signature stripped", token: func(f *fixture) string {
			tok := ed.MustMint(t, f.claims(), nil)
			return tok[:strings.LastIndex(tok, ".")+1]
		}, detail: detailSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			header := tc.header
			tok := ""
			if tc.token != nil {
				tok = tc.token(f)
				header = "Bearer " + tok
			}
			p, err := f.v.Authenticate(context.Background(), header)
			if p != nil {
				t.Fatalf("Authenticate accepted the token: %+v", *p)
			}
			requireRefused(t, err, tc.detail, tok)
		})
	}
}

// claimsEdit mints with key after editing valid claims.
func claimsEdit(key *authtest.Key, edit func(map[string]any)) func(f *fixture) string {
	return func(f *fixture) string {
		c := f.claims()
		edit(c)
		tok, err := key.MintWith(c, nil)
		if err != nil {
			panic(err)
		}
		return tok
	}
}

func TestAuthenticateCustomClaims(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.ScopeClaim = "scp"; c.ClientClaim = "azp" })
	c := f.claims()
	delete(c, "client_id")
	c["azp"] = testClient
	c["scp"] = []string{"messaging:send"}
	c["scope"] = "ignored"
	p, err := f.auth(testKey(t, "es256-1").MustMint(t, c, nil))
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if p.ClientID != testClient || len(p.Scopes) != 1 || p.Scopes[0] != "messaging:send" {
		t.Fatalf("principal = %+v", *p)
	}
}

func TestAuthenticateLeewayIsConfigurable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.Leeway = time.Second })
	c := f.claims()
	c["nbf"] = testStart.Add(20 * time.Second).Unix()
	_, err := f.auth(testKey(t, "eddsa-1").MustMint(t, c, nil))
	requireRefused(t, err, detailNotYetValid, "")
}
