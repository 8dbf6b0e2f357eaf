package httpgw

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"switchboard/engine"
)

// googleTokenServer is a Google-style OAuth 2.0 token endpoint that takes the RFC 7523 JWT
// grant: it verifies the assertion with the service account's public key and its claims, then
// hands out ya29.tok-1, ya29.tok-2, …; refuse makes it answer 400 invalid_grant.
type googleTokenServer struct {
	*gateway
	key     *rsa.PrivateKey
	fetches atomic.Int32 // tokens handed out
	asked   atomic.Int32 // requests
	refuse  atomic.Bool
	mu      sync.Mutex
	bad     []string // why assertions were refused
}

const (
	testServiceAccountEmail = "push@switchboard-test.iam.gserviceaccount.com"
	testFCMScope            = "https://www.googleapis.com/auth/firebase.messaging"
)

func newGoogleTokenServer(t *testing.T, expiresIn int) *googleTokenServer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ts := &googleTokenServer{key: key}
	ts.gateway = newGateway(t, func(w http.ResponseWriter, r *http.Request) {
		ts.asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if ts.refuse.Load() {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`))
			return
		}
		if why := ts.check(r); why != "" {
			ts.mu.Lock()
			ts.bad = append(ts.bad, why)
			ts.mu.Unlock()
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		n := ts.fetches.Add(1)
		_, _ = fmt.Fprintf(w, `{"access_token":"ya29.tok-%d","token_type":"Bearer","expires_in":%d}`, n, expiresIn)
	})
	return ts
}

// check verifies the grant as Google does and returns what is wrong with it, "" when nothing.
func (ts *googleTokenServer) check(r *http.Request) string {
	if r.FormValue("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		return "grant_type " + r.FormValue("grant_type")
	}
	tok, err := jwt.ParseSigned(r.FormValue("assertion"), []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return "assertion: " + err.Error()
	}
	var claims jwt.Claims
	var extra struct {
		Scope string `json:"scope"`
	}
	if err := tok.Claims(&ts.key.PublicKey, &claims, &extra); err != nil {
		return "signature: " + err.Error()
	}
	if claims.Issuer != testServiceAccountEmail || !claims.Audience.Contains(ts.URL+"/token") || extra.Scope != testFCMScope {
		return fmt.Sprintf("claims %+v scope %q", claims, extra.Scope)
	}
	if len(tok.Headers) != 1 || tok.Headers[0].KeyID != "key-1" {
		return "kid"
	}
	return ""
}

// serviceAccountJSON is the service account's JSON key, as the Google Cloud console writes it.
func (ts *googleTokenServer) serviceAccountJSON(t *testing.T) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(ts.key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "switchboard-test", "private_key_id": "key-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": testServiceAccountEmail, "client_id": "1234567890",
		"token_uri": ts.URL + "/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// googleSetup is a gateway that answers 200 and a provider authenticated by the service account.
func googleSetup(t *testing.T, tokens *googleTokenServer) (*gateway, *Provider, *fakeClock) {
	t.Helper()
	g := newGateway(t, answerJSON(http.StatusOK, `{"name":"projects/p/messages/1"}`))
	cfg := baseConfig(t, g.URL, specAdapter)
	clock := newFakeClock()
	cfg.Clock = clock
	cfg.Auth = Auth{Kind: AuthGoogleServiceAccount, ServiceAccount: tokens.serviceAccountJSON(t), Scopes: []string{testFCMScope}}
	return g, newTestProvider(t, cfg), clock
}

func TestServiceAccountOneTokenForManyConcurrentSends(t *testing.T) {
	t.Parallel()
	tokens := newGoogleTokenServer(t, 3600)
	g, p, _ := googleSetup(t, tokens)
	const senders = 24
	var wg sync.WaitGroup
	outcomes := make([]engine.Outcome, senders)
	for i := range senders {
		wg.Go(func() {
			outcomes[i] = p.Send(context.Background(), specOutbound(t, map[string]any{"target": "projects/p/messages:send"}))
		})
	}
	wg.Wait()
	for i, o := range outcomes {
		if o.Class != engine.OutcomeAccepted {
			t.Fatalf("sender %d: %+v (refused assertions: %v)", i, o, tokens.bad)
		}
	}
	if n := tokens.fetches.Load(); n != 1 {
		t.Fatalf("%d tokens fetched for %d concurrent sends, want 1", n, senders)
	}
	for i, r := range g.requests() {
		if got := r.Header.Get("Authorization"); got != "Bearer ya29.tok-1" {
			t.Fatalf("request %d: Authorization %q", i, got)
		}
	}
}

func TestServiceAccountTokenIsRenewedBeforeItExpires(t *testing.T) {
	t.Parallel()
	tokens := newGoogleTokenServer(t, 3600)
	g, p, clock := googleSetup(t, tokens)
	send := func() {
		t.Helper()
		wantOutcome(t, p.Send(context.Background(), specOutbound(t, map[string]any{"target": "projects/p/messages:send"})), engine.OutcomeAccepted, "")
	}
	send()
	clock.Advance(58 * time.Minute) // still more than a minute before expiry: the same token
	send()
	clock.Advance(time.Minute + time.Second) // within the last minute: a new one, before expiry
	send()
	var got []string
	for _, r := range g.requests() {
		got = append(got, r.Header.Get("Authorization"))
	}
	if want := []string{"Bearer ya29.tok-1", "Bearer ya29.tok-1", "Bearer ya29.tok-2"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("tokens sent %q, want %q", got, want)
	}
}

func TestServiceAccountRefusedGrantIsADefiniteConfigurationError(t *testing.T) {
	t.Parallel()
	tokens := newGoogleTokenServer(t, 3600)
	tokens.refuse.Store(true)
	g, p, clock := googleSetup(t, tokens)
	o := p.Send(context.Background(), specOutbound(t, map[string]any{"target": "projects/p/messages:send"}))
	wantOutcome(t, o, engine.OutcomePermanent, CodeGrantRefused)
	for _, want := range []string{"google-service-account", "refused the grant", "status 400", "invalid_grant: Invalid JWT Signature.", "check the key"} {
		if !strings.Contains(o.Reason, want) {
			t.Errorf("reason %q does not say %q", o.Reason, want)
		}
	}
	if strings.Contains(o.Reason, "PRIVATE KEY") {
		t.Fatalf("the reason shows the key: %s", o.Reason)
	}
	if n := len(g.requests()); n != 0 {
		t.Fatalf("the gateway saw %d requests without a token", n)
	}
	// The refusal stands for 30 seconds without asking the endpoint again; then it is asked.
	wantOutcome(t, p.Send(context.Background(), specOutbound(t, map[string]any{"target": "projects/p/messages:send"})),
		engine.OutcomePermanent, CodeGrantRefused)
	if n := tokens.asked.Load(); n != 1 {
		t.Fatalf("the token endpoint was asked %d times within 30 s of a refusal, want 1", n)
	}
	tokens.refuse.Store(false)
	clock.Advance(31 * time.Second)
	wantOutcome(t, p.Send(context.Background(), specOutbound(t, map[string]any{"target": "projects/p/messages:send"})),
		engine.OutcomeAccepted, "")
}

func TestServiceAccountKeyMustBeUsable(t *testing.T) {
	t.Parallel()
	for name, key := range map[string]string{
		"not JSON":        "-----BEGIN PRIVATE KEY-----",
		"no private key":  `{"type":"service_account","client_email":"a@b.c","token_uri":"https://oauth2.googleapis.com/token"}`,
		"an empty object": `{}`,
	} {
		cfg := baseConfig(t, "https://fcm.googleapis.com/v1/", specAdapter)
		cfg.Auth = Auth{Kind: AuthGoogleServiceAccount, ServiceAccount: []byte(key), Scopes: []string{testFCMScope}}
		p, err := New(cfg)
		if err == nil {
			_ = p.Close()
			t.Errorf("%s: New accepted it", name)
			continue
		}
		if strings.Contains(err.Error(), "a@b.c") {
			t.Errorf("%s: the error shows the key: %v", name, err)
		}
	}
}
