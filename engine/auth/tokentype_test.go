package auth

import (
	"fmt"
	"testing"
	"time"
)

func TestTokenTypesAccepted(t *testing.T) {
	t.Parallel()
	key := testKey(t, "es256-1")
	cases := []struct {
		name     string
		types    []string
		typ      any // nil: no typ header
		accepted bool
	}{
		{name: "default: at+jwt", typ: "at+jwt", accepted: true},
		{name: "default: JWT", typ: "JWT"},
		{name: "default: untyped", typ: nil},
		{name: "JWT listed: JWT", types: []string{"at+jwt", "JWT"}, typ: "JWT", accepted: true},
		{name: "JWT listed: lower case", types: []string{"at+jwt", "JWT"}, typ: "jwt", accepted: true},
		{name: "JWT listed: application/jwt", types: []string{"at+jwt", "JWT"}, typ: "application/JWT", accepted: true},
		{name: "JWT listed: at+jwt still", types: []string{"at+jwt", "JWT"}, typ: "application/at+jwt", accepted: true},
		{name: "JWT listed: untyped", types: []string{"at+jwt", "JWT"}, typ: nil},
		{name: "JWT listed: typ JOSE", types: []string{"at+jwt", "JWT"}, typ: "JOSE"},
		{name: "JWT listed: typ untyped", types: []string{"JWT", "untyped"}, typ: "untyped"},
		{name: "JWT listed: typ empty", types: []string{"JWT", "untyped"}, typ: ""},
		{name: "JWT only: at+jwt", types: []string{"JWT"}, typ: "at+jwt"},
		{name: "untyped listed: untyped", types: []string{"JWT", "untyped"}, typ: nil, accepted: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(c *Config) { c.TokenTypes = tc.types })
			tok := key.MustMint(t, f.claims(), map[string]any{"typ": tc.typ})
			p, err := f.auth(tok)
			if tc.accepted {
				if err != nil {
					t.Fatalf("Authenticate: %v", err)
				}
				if p.ClientID != testClient || !p.HasScope("messaging:send") {
					t.Fatalf("principal = %+v", *p)
				}
				return
			}
			if p != nil {
				t.Fatalf("accepted: %+v", *p)
			}
			requireRefused(t, err, detailType, tok)
		})
	}
}

// TestPlainJWTChecksClaimsAlike proves a JWT-typed token meets every claim rule of at+jwt.
func TestPlainJWTChecksClaimsAlike(t *testing.T) {
	t.Parallel()
	key := testKey(t, "eddsa-1")
	cases := []struct {
		name   string
		edit   func(c map[string]any)
		detail string
	}{
		{name: "wrong issuer", edit: func(c map[string]any) { c["iss"] = "https://evil.example" }, detail: detailIssuer},
		{name: "another audience", edit: func(c map[string]any) { c["aud"] = "other-api" }, detail: detailAudience},
		{name: "expired", edit: func(c map[string]any) { c["exp"] = testStart.Add(-time.Minute).Unix() }, detail: detailExpired},
		{name: "client not allowed", edit: func(c map[string]any) { c["client_id"] = "intruder" }, detail: detailClient},
		{name: "scope malformed", edit: func(c map[string]any) { c["scope"] = 3 }, detail: detailScopeClaim},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(c *Config) { c.TokenTypes = []string{"JWT"} })
			c := f.claims()
			tc.edit(c)
			tok := key.MustMint(t, c, map[string]any{"typ": "JWT"})
			_, err := f.auth(tok)
			requireRefused(t, err, tc.detail, tok)
		})
	}
}

func TestIDTokensRefused(t *testing.T) {
	t.Parallel()
	key := testKey(t, "eddsa-1")
	for _, mark := range []string{"nonce", "at_hash", "c_hash"} {
		for _, typ := range []any{"JWT", nil} {
			t.Run(fmt.Sprintf("%s typ %v", mark, typ), func(t *testing.T) {
				t.Parallel()
				f := newFixture(t, func(c *Config) { c.TokenTypes = []string{"JWT", "untyped"} })
				c := f.claims()
				c[mark] = "bWFyaw"
				tok := key.MustMint(t, c, map[string]any{"typ": typ})
				_, err := f.auth(tok)
				requireRefused(t, err, detailIDToken, tok)
			})
		}
	}
	t.Run("at+jwt with a nonce is an access token by its type", func(t *testing.T) {
		t.Parallel()
		f := newFixture(t, func(c *Config) { c.TokenTypes = []string{"at+jwt", "JWT"} })
		c := f.claims()
		c["nonce"] = "n-0S6_WzA2Mj"
		if _, err := f.auth(key.MustMint(t, c, nil)); err != nil {
			t.Fatalf("Authenticate: %v", err)
		}
	})
}

func TestScopesFromAnSCPArray(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *Config) { c.ScopeClaim = "scp"; c.TokenTypes = []string{"JWT"} })
	c := f.claims()
	delete(c, "scope")
	c["scp"] = []any{"messaging:send", "messaging:read"}
	p, err := f.auth(testKey(t, "rs256-1").MustMint(t, c, map[string]any{"typ": "JWT"}))
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if !p.HasScope("messaging:send") || !p.HasScope("messaging:read") || len(p.Scopes) != 2 {
		t.Fatalf("scopes = %q", p.Scopes)
	}
}
