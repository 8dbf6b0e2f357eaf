package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// The OAuth clients of the Hydra test: the quickstart's sender, with a secret, and its operator
// console, a public client, as docs/identity.md registers them.
const (
	hydraSenderSecret = "case-system-secret-for-the-hydra-test"
	hydraOtherAPI     = "https://other-api.example"
)

// hydraTokens are real tokens of a real Ory Hydra for the quickstart's clients.
type hydraTokens struct {
	sender        string // case-system, client credentials, scope messaging:send, our audience
	otherAudience string // the same for another API's audience
	noScope       string // the same without messaging:send
	operator      string // operations-console, authorization code with PKCE
	idToken       string // the ID token that came with operator
}

// hydraForQuickstart starts Hydra, registers the quickstart's clients (the console's redirect
// URI on api) and gets every token the tests present.
func hydraForQuickstart(t *testing.T, api string) (*hydra, hydraTokens) {
	t.Helper()
	h := startHydra(t)
	h.addClient(map[string]any{
		"client_id": "case-system", "client_secret": hydraSenderSecret,
		"grant_types": []string{"client_credentials"}, "token_endpoint_auth_method": "client_secret_post",
		"scope": "messaging:send reports:read", "audience": []string{devAudience, hydraOtherAPI},
	})
	h.addClient(map[string]any{
		"client_id": "operations-console", "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code"}, "response_types": []string{"code"},
		"redirect_uris": []string{api + "/console/callback"},
		"scope":         "openid messaging:operate", "audience": []string{devAudience},
	})
	var tt hydraTokens
	tt.sender = h.clientCredentials("case-system", hydraSenderSecret, "messaging:send", devAudience)
	tt.otherAudience = h.clientCredentials("case-system", hydraSenderSecret, "messaging:send", hydraOtherAPI)
	tt.noScope = h.clientCredentials("case-system", hydraSenderSecret, "reports:read", devAudience)
	tt.operator, tt.idToken = h.authorizationCode("operations-console", api+"/console/callback", "ops-admin",
		[]string{"openid", "messaging:operate"}, devAudience)
	return h, tt
}

// hydraAuthentication replaces the dev runtime document's authentication section with the
// recipe's for Hydra, keeping its allowed clients (every client of the package).
func hydraAuthentication(doc map[string]any, h *hydra, tokenTypes []string) {
	dev := doc["authentication"].(map[string]any)["oidc"].(map[string]any)
	oidc := map[string]any{
		"issuer": h.issuer, "audience": devAudience, "jwksUri": h.issuer + "/.well-known/jwks.json",
		"allowedClients": dev["allowedClients"],
	}
	if tokenTypes != nil {
		oidc["tokenTypes"] = tokenTypes
	}
	doc["authentication"] = map[string]any{"oidc": oidc, "scopeClaim": "scp"}
}

// TestHydraTokensAgainstServe runs docs/identity.md's Ory Hydra recipe: a real `serve` refuses
// Hydra's JWT-typed access tokens by default, and with tokenTypes [at+jwt, JWT] takes the
// sender's (client credentials) and the console's (authorization code with PKCE), and refuses
// another audience's, one without the profile's scope, and the ID token.
func TestHydraTokensAgainstServe(t *testing.T) {
	t.Parallel()
	api := loopbackAddr(t)
	h, tok := hydraForQuickstart(t, "http://"+api)

	dir := quickstartCopy(t)
	pkg, err := loadPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// No message is sent: the gateway address is never called.
	session := devSession{API: "http://" + api, Gateways: oneMockForAll(pkg, "http://127.0.0.1:9"), Clients: clientsOf(pkg)}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		t.Fatal(err)
	}
	serve := func(name string, tokenTypes []string) *scaleInstance {
		path := editRuntime(t, layout.runtimePath, name, func(doc map[string]any) {
			hydraAuthentication(doc, h, tokenTypes)
			doc["listen"] = map[string]any{"api": api, "metrics": ""}
		})
		in := &scaleInstance{tb: t, bin: binary, runtime: path, env: append(os.Environ(), "SWITCHBOARD_CONFIG="),
			api: "http://" + api, logs: &syncBuffer{}}
		t.Cleanup(func() {
			in.kill()
			if t.Failed() {
				t.Logf("serve %s logs (tail):\n%s", name, tail(in.logs.String(), 4000))
			}
		})
		in.start()
		in.waitReady(90 * time.Second)
		return in
	}
	check := func(in *scaleInstance, name, path, token string, status int, code, detail string) {
		t.Helper()
		got, gotCode, gotDetail := apiCall(t, in.api+path, token)
		if got != status || gotCode != code || !strings.Contains(gotDetail, detail) {
			t.Errorf("%s: GET %s = %d %s %q, want %d %s %q", name, path, got, gotCode, gotDetail, status, code, detail)
		}
	}

	strict := serve("runtime-strict.yaml", nil)
	check(strict, "default types, sender", "/v1/messages", tok.sender, http.StatusUnauthorized, "authentication.refused", "type (typ) is not accepted")
	check(strict, "default types, console", "/v1/slo", tok.operator, http.StatusUnauthorized, "authentication.refused", "type (typ) is not accepted")
	strict.kill()

	plain := serve("runtime-jwt.yaml", []string{"at+jwt", "JWT"})
	check(plain, "sender", "/v1/messages", tok.sender, http.StatusOK, "", "")
	check(plain, "console", "/v1/slo", tok.operator, http.StatusOK, "", "")
	check(plain, "another audience", "/v1/messages", tok.otherAudience, http.StatusUnauthorized, "authentication.refused", "not meant for this service")
	check(plain, "without the scope", "/v1/messages", tok.noScope, http.StatusForbidden, "operation.not-authorized", "lacks a scope")
	check(plain, "the ID token", "/v1/slo", tok.idToken, http.StatusUnauthorized, "authentication.refused", "an ID token")
}

// TestHydraTokenExpires proves an expired Hydra token is refused: the same stack as serve, on
// the injected clock, takes the token now and refuses it two hours later (Hydra's tokens live
// an hour, plus 30 s of leeway).
func TestHydraTokenExpires(t *testing.T) {
	t.Parallel()
	h, tok := hydraForQuickstart(t, "http://127.0.0.1:9")
	e := newAPIEnv(t, envOptions{runtime: func(doc map[string]any) {
		hydraAuthentication(doc, h, []string{"JWT"})
	}})
	if a := e.do(request{method: http.MethodGet, path: "/v1/messages", token: tok.sender}); a.status != http.StatusOK {
		t.Fatalf("fresh token: %d %s", a.status, a.raw)
	}
	e.clock.Advance(2 * time.Hour)
	a := e.do(request{method: http.MethodGet, path: "/v1/messages", token: tok.sender})
	if a.status != http.StatusUnauthorized || !strings.Contains(string(a.raw), "has expired") {
		t.Fatalf("two hours later: %d %s, want 401 expired", a.status, a.raw)
	}
}

// apiCall GETs url with a bearer token and returns the status and, for a problem, its code and
// detail.
func apiCall(t *testing.T, url, token string) (status int, code, detail string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK {
		return resp.StatusCode, "", ""
	}
	var p struct{ Code, Detail string }
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("GET %s: %d %q is not a problem", url, resp.StatusCode, raw)
	}
	return resp.StatusCode, p.Code, p.Detail
}
