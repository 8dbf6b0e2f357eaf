package auth

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"switchboard/engine"
	"switchboard/packages"
)

// testManifest is a package of access profiles only (the operator and receiver roles need no
// sender profiles or templates), so the test depends on nothing but the loader.
const testManifest = `apiVersion: switchboard/v1
kind: Package
accessProfiles:
  - id: case-notices
    role: operator
    clients: [case-system]
    requiredScopes: [messaging:send]
    requestsPerMinute: 600
    burst: 100
  - id: operations
    role: operator
    clients: [operations-console]
    requiredScopes: [messaging:operate, messaging:read]
    requestsPerMinute: 60
    burst: 10
`

// loadPackage writes testManifest into a temporary folder and loads it for real.
func loadPackage(t testing.TB) *packages.Package {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte(testManifest), 0o600); err != nil {
		t.Fatal(err)
	}
	pkg, err := packages.Load(dir)
	if err != nil {
		t.Fatalf("load test package: %v", err)
	}
	return pkg
}

func TestAuthorizeWithScopesFromTokens(t *testing.T) {
	t.Parallel()
	pkg := loadPackage(t)
	key := testKey(t, "eddsa-1")
	cases := []struct {
		name    string
		client  string
		scope   any // the scope claim as the token carries it
		profile string
		code    string // "" means authorized
	}{
		{name: "scope string", client: testClient, scope: "openid messaging:send", profile: "case-notices"},
		{name: "scope array", client: testClient, scope: []string{"messaging:send", "other"}, profile: "case-notices"},
		{name: "two required scopes", client: "operations-console", scope: "messaging:read messaging:operate", profile: "operations"},
		{name: "one of two required scopes", client: "operations-console", scope: "messaging:operate", code: engine.CodeOperationNotAuthz},
		{name: "missing scope", client: testClient, scope: "messaging:operate", code: engine.CodeOperationNotAuthz},
		{name: "missing scope in an array", client: testClient, scope: []string{"messaging:sendx"}, code: engine.CodeOperationNotAuthz},
		{name: "no scope claim", client: testClient, code: engine.CodeOperationNotAuthz},
		{name: "client without a profile", client: "unprofiled", scope: "messaging:send", code: engine.CodeAuthenticationRefused},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, func(c *Config) { c.AllowedClients = []string{testClient, "operations-console", "unprofiled"} })
			c := f.claims()
			c["client_id"] = tc.client
			delete(c, "scope")
			if tc.scope != nil {
				c["scope"] = tc.scope
			}
			p, err := f.auth(key.MustMint(t, c, nil))
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			profile, err := Authorize(pkg, p)
			if tc.code == "" {
				if err != nil {
					t.Fatalf("Authorize: %v", err)
				}
				if profile == nil || profile.ID != tc.profile {
					t.Fatalf("profile = %v, want %s", profile, tc.profile)
				}
				return
			}
			var prob *engine.Problem
			if !errors.As(err, &prob) || prob.Code != tc.code {
				t.Fatalf("err = %v, want code %s", err, tc.code)
			}
			if profile != nil {
				t.Fatalf("a refused caller got profile %s", profile.ID)
			}
			challenge := WWWAuthenticate(err)
			want := map[string]string{
				engine.CodeOperationNotAuthz:     `Bearer realm="switchboard", error="insufficient_scope", error_description="` + detailMissingScope + `"`,
				engine.CodeAuthenticationRefused: `Bearer realm="switchboard", error="invalid_token", error_description="` + detailNoProfile + `"`,
			}[tc.code]
			if challenge != want {
				t.Fatalf("WWWAuthenticate = %q, want %q", challenge, want)
			}
		})
	}
}

func TestAuthorizeWithoutPackageOrPrincipal(t *testing.T) {
	t.Parallel()
	if _, err := Authorize(nil, &Principal{ClientID: testClient}); engine.CodeOf(err) != engine.CodeServiceUnavailable {
		t.Fatalf("nil package: %v", err)
	}
	if _, err := Authorize(loadPackage(t), nil); engine.CodeOf(err) != engine.CodeAuthenticationRefused {
		t.Fatalf("nil principal: %v", err)
	}
}
