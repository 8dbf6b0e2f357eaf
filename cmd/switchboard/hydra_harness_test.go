package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The identity recipe's module: Ory Hydra pinned as a tool, and its configuration file.
var (
	identityModule = filepath.Join("..", "..", "examples", "identity")
	hydraConfig    = filepath.Join(identityModule, "hydra.yml")
)

// envRequireHydra turns the Hydra test's skip into a failure (CI builds Hydra first).
const envRequireHydra = "SWITCHBOARD_REQUIRE_HYDRA"

// hydraBinary builds Ory Hydra from examples/identity (with -tags sqlite, for dsn: memory) into
// the user's cache folder, where go build leaves an up-to-date binary alone. When it cannot be
// built the test skips, saying why, or fails under SWITCHBOARD_REQUIRE_HYDRA=1.
func hydraBinary(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "switchboard", "hydra-v2.3.0")
	build := exec.CommandContext(t.Context(), "go", "build", "-tags", "sqlite", "-o", bin, "github.com/ory/hydra/v2")
	build.Dir = identityModule
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		msg := fmt.Sprintf("cannot build Ory Hydra in examples/identity (go build -tags sqlite github.com/ory/hydra/v2): %v\n%s", err, tail(string(out), 2000))
		if os.Getenv(envRequireHydra) == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "\nset " + envRequireHydra + "=1 to make this a failure")
	}
	return bin
}

// hydra is a running Ory Hydra (serve all --dev, in-memory database) on two loopback ports,
// configured by the recipe's hydra.yml with the addresses overridden from the environment.
type hydra struct {
	t      *testing.T
	issuer string // the public port's URL, also the tokens' iss
	admin  string
}

func startHydra(t *testing.T) *hydra {
	t.Helper()
	bin := hydraBinary(t)
	public, admin := loopbackAddr(t), loopbackAddr(t)
	h := &hydra{t: t, issuer: "http://" + public, admin: "http://" + admin}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	cmd := exec.Command(bin, "serve", "all", "--dev", "--sqa-opt-out", "-c", hydraConfig)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.Env = append(os.Environ(),
		"SECRETS_SYSTEM="+hex.EncodeToString(secret),
		"SERVE_PUBLIC_PORT="+public[strings.LastIndex(public, ":")+1:],
		"SERVE_ADMIN_PORT="+admin[strings.LastIndex(admin, ":")+1:],
		"URLS_SELF_ISSUER="+h.issuer,
		"LOG_LEVEL=warn")
	if err := cmd.Start(); err != nil {
		t.Fatalf("start hydra: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		if t.Failed() {
			t.Logf("hydra logs (tail):\n%s", tail(logs.String(), 4000))
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-done:
			t.Fatalf("hydra exited:\n%s", tail(logs.String(), 4000))
		default:
		}
		if resp, err := http.Get(h.admin + "/health/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return h
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("hydra not ready after a minute:\n%s", tail(logs.String(), 4000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call sends a JSON (or form) request and decodes a JSON answer into out, failing on a status
// other than want.
func (h *hydra) call(client *http.Client, method, u string, body any, want int, out any) {
	h.t.Helper()
	var r io.Reader
	ct := "application/json"
	switch b := body.(type) {
	case nil:
	case url.Values:
		r, ct = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	default:
		raw, _ := json.Marshal(b)
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		h.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		h.t.Fatalf("%s %s: %d, want %d: %s", method, u, resp.StatusCode, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			h.t.Fatalf("%s %s: decode %q: %v", method, u, raw, err)
		}
	}
}

// addClient registers an OAuth client through Hydra's admin API (POST /admin/clients).
func (h *hydra) addClient(client map[string]any) {
	h.t.Helper()
	h.call(http.DefaultClient, http.MethodPost, h.admin+"/admin/clients", client, http.StatusCreated, nil)
}

// clientCredentials gets an access token with the client credentials grant, as a sending
// client does (docs/identity.md).
func (h *hydra) clientCredentials(id, secret, scope, audience string) string {
	h.t.Helper()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {id}, "client_secret": {secret},
		"scope": {scope}, "audience": {audience}}
	h.call(http.DefaultClient, http.MethodPost, h.issuer+"/oauth2/token", form, http.StatusOK, &tok)
	return tok.AccessToken
}

// authorizationCode signs subject in through the authorization code grant with PKCE, as the
// console does, with Hydra's admin API standing in for the login and consent app: it accepts
// the login, and the consent grants scope and the access-token audience. It returns the access
// token and the ID token.
func (h *hydra) authorizationCode(clientID, redirectURI, subject string, scope []string, audience string) (access, id string) {
	h.t.Helper()
	jar, _ := cookiejar.New(nil)
	// No timeout of its own: Hydra makes its ID token key pair (RSA 4096) on the first sign-in,
	// which takes seconds on a busy machine.
	browser := &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	verifier := rand.Text() + rand.Text()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {clientID}, "redirect_uri": {redirectURI},
		"scope": {strings.Join(scope, " ")}, "state": {rand.Text()},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	next := h.issuer + "/oauth2/auth?" + q.Encode()
	// The browser's hops: Hydra sends it to the login app, back, to the consent app, back, and
	// to the redirect URI with the code.
	challenge := func(param string) string {
		resp, err := browser.Get(next)
		if err != nil {
			h.t.Fatalf("GET %s: %v", next, err)
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || resp.StatusCode/100 != 3 {
			h.t.Fatalf("GET %s: %d, want a redirect (%v)", next, resp.StatusCode, err)
		}
		v := loc.Query().Get(param)
		if v == "" {
			h.t.Fatalf("hydra redirected to %s without %s", loc, param)
		}
		return v
	}
	var redirect struct {
		To string `json:"redirect_to"`
	}
	login := challenge("login_challenge")
	h.call(http.DefaultClient, http.MethodPut, h.admin+"/admin/oauth2/auth/requests/login/accept?login_challenge="+url.QueryEscape(login),
		map[string]any{"subject": subject}, http.StatusOK, &redirect)
	next = redirect.To
	consent := challenge("consent_challenge")
	h.call(http.DefaultClient, http.MethodPut, h.admin+"/admin/oauth2/auth/requests/consent/accept?consent_challenge="+url.QueryEscape(consent),
		map[string]any{"grant_scope": scope, "grant_access_token_audience": []string{audience}}, http.StatusOK, &redirect)
	next = redirect.To
	code := challenge("code")
	var tok struct {
		AccessToken string `json:"access_token"`
		IDToken     string `json:"id_token"`
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
		"client_id": {clientID}, "code_verifier": {verifier}}
	h.call(http.DefaultClient, http.MethodPost, h.issuer+"/oauth2/token", form, http.StatusOK, &tok)
	if tok.AccessToken == "" || tok.IDToken == "" {
		h.t.Fatalf("the code exchange gave access token %t, ID token %t", tok.AccessToken != "", tok.IDToken != "")
	}
	return tok.AccessToken, tok.IDToken
}
