package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/auth/authtest"
	"switchboard/engine/enginetest"
)

const (
	testIssuer   = "https://id.example"
	testAudience = "switchboard"
	testClient   = "case-system"
	testTTL      = 10 * time.Minute
)

// testStart is where every fake clock starts.
var testStart = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// sharedKeys generates the test keys once per test binary: RSA generation is slow under -race.
var sharedKeys = sync.OnceValues(func() (map[string]*authtest.Key, error) {
	out := map[string]*authtest.Key{}
	for _, alg := range []string{authtest.RS256, authtest.ES256, authtest.EdDSA} {
		for _, suffix := range []string{"1", "2"} {
			k, err := authtest.NewKey(alg, strings.ToLower(alg)+"-"+suffix)
			if err != nil {
				return nil, err
			}
			out[k.KID] = k
		}
	}
	return out, nil
})

// testKey returns a shared key by kid: "rs256-1", "es256-2", "eddsa-1", …
func testKey(t testing.TB, kid string) *authtest.Key {
	t.Helper()
	keys, err := sharedKeys()
	if err != nil {
		t.Fatal(err)
	}
	k, ok := keys[kid]
	if !ok {
		t.Fatalf("no test key %q", kid)
	}
	return k
}

// fixture is a verifier reading a real JWKS server, with a fake clock.
type fixture struct {
	clock *enginetest.FakeClock
	jwks  *authtest.JWKSServer
	v     *Verifier
}

// newFixture serves the "-1" keys of every algorithm.
func newFixture(t testing.TB, mutate ...func(*Config)) *fixture {
	t.Helper()
	f := &fixture{clock: enginetest.NewFakeClock(testStart)}
	f.jwks = authtest.NewJWKSServer(t, testKey(t, "rs256-1"), testKey(t, "es256-1"), testKey(t, "eddsa-1"))
	cfg := Config{
		Issuer:         testIssuer,
		Audience:       testAudience,
		JWKSURI:        f.jwks.URL,
		AllowedClients: []string{testClient, "operations-console"},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	v, err := NewVerifier(cfg, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	f.v = v
	return f
}

// claims returns valid claims at the fixture's current time.
func (f *fixture) claims(scopes ...string) map[string]any {
	if scopes == nil {
		scopes = []string{"messaging:send"}
	}
	return authtest.Claims(testIssuer, testAudience, testClient, scopes, f.clock.Now(), testTTL)
}

func (f *fixture) auth(token string) (*Principal, error) {
	return f.v.Authenticate(context.Background(), "Bearer "+token)
}

// requireRefused asserts err is authentication.refused with the detail and a challenge that
// carries invalid_token and the detail, and that neither echoes the token.
func requireRefused(t testing.TB, err error, detail, token string) {
	t.Helper()
	var p *engine.Problem
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T) is not a *engine.Problem", err, err)
	}
	if p.Code != engine.CodeAuthenticationRefused {
		t.Fatalf("code = %q, want %q (err %v)", p.Code, engine.CodeAuthenticationRefused, err)
	}
	if p.Detail != detail {
		t.Fatalf("detail = %q, want %q (err %v)", p.Detail, detail, err)
	}
	challenge := WWWAuthenticate(err)
	want := `Bearer realm="switchboard", error="invalid_token", error_description="` + detail + `"`
	if challenge != want {
		t.Fatalf("WWWAuthenticate = %q, want %q", challenge, want)
	}
	if len(token) > 8 && (strings.Contains(p.Detail, token) || strings.Contains(challenge, token)) {
		t.Fatalf("the refusal echoes the token")
	}
}
