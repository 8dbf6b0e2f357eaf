package auth

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"switchboard/engine/enginetest"
)

// signInFixture is a dev issuer's sign-in endpoints on a real HTTP server, with a fake clock,
// and a verifier that reads the JWK Set the issuer publishes.
type signInFixture struct {
	t        *testing.T
	srv      *httptest.Server
	clock    *enginetest.FakeClock
	v        *Verifier
	redirect string
	client   *http.Client
}

func newSignInFixture(t *testing.T) *signInFixture {
	t.Helper()
	f := &signInFixture{t: t, clock: enginetest.NewFakeClock(testStart), redirect: "http://127.0.0.1:9/console/callback",
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	var handler http.Handler
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { handler.ServeHTTP(w, r) }))
	t.Cleanup(f.srv.Close)
	d, err := NewDevIssuer(f.srv.URL, testAudience)
	if err != nil {
		t.Fatal(err)
	}
	handler = d.SignIn(DevSignInOptions{Clock: f.clock, RedirectURIs: []string{f.redirect},
		Clients: []DevClient{{ID: "ops-console", Role: "operator", Scopes: []string{"messaging:operate"}},
			{ID: "case-system", Role: "sender", Scopes: []string{"messaging:send"}}}})
	f.v, err = NewVerifier(Config{Issuer: f.srv.URL, Audience: testAudience, JWKSURI: f.srv.URL + "/jwks.json",
		AllowedClients: []string{"ops-console", "case-system"}}, f.clock)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

const testVerifier = "a-pkce-code-verifier-of-at-least-forty-three-characters-0123456789"

func challengeOf(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// authorizeForm is the sign-in page's form, choosing client as.
func (f *signInFixture) authorizeForm(as string) url.Values {
	return url.Values{"response_type": {"code"}, "client_id": {"ops-console"}, "redirect_uri": {f.redirect},
		"state": {"st-1"}, "code_challenge": {challengeOf(testVerifier)}, "code_challenge_method": {"S256"}, "as": {as}}
}

// code signs in as client and returns the code from the redirect.
func (f *signInFixture) code(as string) string {
	f.t.Helper()
	resp, err := f.client.PostForm(f.srv.URL+"/authorize", f.authorizeForm(as))
	if err != nil {
		f.t.Fatal(err)
	}
	resp.Body.Close()
	loc, _ := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc.String(), f.redirect+"?") || loc.Query().Get("state") != "st-1" {
		f.t.Fatalf("authorize: %d %s", resp.StatusCode, loc)
	}
	return loc.Query().Get("code")
}

// exchange posts the token request and returns the status and JSON answer.
func (f *signInFixture) exchange(code, verifier string) (int, map[string]any) {
	f.t.Helper()
	resp, err := http.PostForm(f.srv.URL+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
		"redirect_uri": {f.redirect}, "client_id": {"ops-console"}, "code_verifier": {verifier}})
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
		f.t.Fatal("the token endpoint does not allow the console's origin to read its answer")
	}
	return resp.StatusCode, out
}

// TestDevSignInCodeFlow signs in through the page and exchanges the code with PKCE: the token
// verifies as the chosen client; a code works once, with its verifier, within its minute.
func TestDevSignInCodeFlow(t *testing.T) {
	t.Parallel()
	f := newSignInFixture(t)
	resp, err := http.Get(f.srv.URL + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var disc map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&disc)
	resp.Body.Close()
	if disc["issuer"] != f.srv.URL || disc["token_endpoint"] != f.srv.URL+"/token" || disc["authorization_endpoint"] != f.srv.URL+"/authorize" {
		t.Fatalf("discovery %v", disc)
	}
	page, err := http.Get(f.srv.URL + "/authorize?" + url.Values{"response_type": {"code"}, "client_id": {"ops-console"},
		"redirect_uri": {f.redirect}, "code_challenge": {challengeOf(testVerifier)}, "code_challenge_method": {"S256"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != 200 || !strings.Contains(string(body), `value="ops-console"`) || !strings.Contains(string(body), `value="case-system"`) ||
		!strings.Contains(page.Header.Get("Content-Security-Policy"), "form-action 'self' http://127.0.0.1:9") {
		t.Fatalf("sign-in page %d %s\n%s", page.StatusCode, page.Header, body)
	}

	code := f.code("ops-console")
	if status, out := f.exchange(code, "another-verifier-of-at-least-forty-three-characters-000000000"); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("wrong verifier: %d %v", status, out)
	}
	if status, out := f.exchange(code, testVerifier); status != 400 || out["error"] != "invalid_grant" {
		t.Fatalf("a code was taken twice (after a failed try): %d %v", status, out)
	}
	code = f.code("ops-console")
	status, out := f.exchange(code, testVerifier)
	tok, _ := out["access_token"].(string)
	if status != 200 || out["token_type"] != "Bearer" || tok == "" {
		t.Fatalf("exchange: %d %v", status, out)
	}
	p, err := f.v.Authenticate(t.Context(), "Bearer "+tok)
	if err != nil || p.ClientID != "ops-console" || !p.HasScope("messaging:operate") {
		t.Fatalf("minted token: %+v, %v", p, err)
	}
	if status, _ := f.exchange(code, testVerifier); status != 400 {
		t.Fatalf("a code was exchanged twice: %d", status)
	}
	late := f.code("case-system")
	f.clock.Advance(codeTTL + time.Second)
	if status, _ := f.exchange(late, testVerifier); status != 400 {
		t.Fatalf("an expired code was exchanged: %d", status)
	}
}

// TestDevSignInRefusals: an unknown redirect URI or client is shown on the page, never
// redirected to; other faults go back to the redirect URI as error=….
func TestDevSignInRefusals(t *testing.T) {
	t.Parallel()
	f := newSignInFixture(t)
	bad := f.authorizeForm("ops-console")
	bad.Set("redirect_uri", "https://evil.example/cb")
	resp, err := f.client.PostForm(f.srv.URL+"/authorize", bad)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("Location") != "" {
		t.Fatalf("unknown redirect: %d %s", resp.StatusCode, resp.Header.Get("Location"))
	}
	for field, value := range map[string]string{"code_challenge_method": "plain", "as": "nobody", "response_type": "token"} {
		form := f.authorizeForm("ops-console")
		form.Set(field, value)
		resp, err := f.client.PostForm(f.srv.URL+"/authorize", form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if resp.StatusCode != http.StatusSeeOther || loc.Query().Get("error") == "" || loc.Query().Get("code") != "" {
			t.Fatalf("%s=%s: %d %s", field, value, resp.StatusCode, loc)
		}
	}
}
