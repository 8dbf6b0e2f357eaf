package httpgw

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"switchboard/engine"
)

// apnsTestAdapter maps the APNs answers these tests need: 200 accepted, 403
// ExpiredProviderToken renew and retry, anything else permanent.
const apnsTestAdapter = `
function prepare(message, profile) {
  return {target: "3/device/" + message.recipient, headers: {"apns-topic": "org.example.app"},
    bodyFormat: "json", body: {aps: {alert: {title: message.parts.title, body: message.parts.body}}}};
}
function interpret(response) {
  if (response.status === 200) { return {outcome: "accepted"}; }
  var reason = response.body !== null && typeof response.body === "object" ? response.body.reason : "";
  if (response.status === 403 && reason === "ExpiredProviderToken") {
    return {outcome: "transient", code: "apns.expired-provider-token", renewCredential: true};
  }
  return {outcome: "permanent", code: "apns." + reason};
}
`

// apnsServer is an APNs stand-in over real HTTP/2 and TLS: it verifies each provider token
// with the key's public half and answers 403 ExpiredProviderToken to the tokens it is told
// to treat as expired.
type apnsServer struct {
	srv     *httptest.Server
	key     *ecdsa.PrivateKey
	conns   atomic.Int32
	mu      sync.Mutex
	tokens  []string // the bearer token of each request, in order
	expired map[string]bool
	bad     []string
	// expireAll answers every request with ExpiredProviderToken.
	expireAll atomic.Bool
}

func newAPNsServer(t *testing.T) *apnsServer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s := &apnsServer{key: key, expired: map[string]bool{}}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.EnableHTTP2 = true
	s.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *apnsServer) serve(w http.ResponseWriter, r *http.Request) {
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "bearer ")
	s.mu.Lock()
	s.tokens = append(s.tokens, token)
	why := s.check(r, token)
	if why != "" {
		s.bad = append(s.bad, why)
	}
	expired := s.expired[token] || s.expireAll.Load()
	s.mu.Unlock()
	w.Header().Set("apns-id", "6b0e4f7c-0000-4000-8000-000000000001")
	switch {
	case why != "":
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"reason":"InvalidProviderToken"}`))
	case expired:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"reason":"ExpiredProviderToken"}`))
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// check verifies a request as APNs does: HTTP/2, the path, an ES256 token with kid and iss.
func (s *apnsServer) check(r *http.Request, token string) string {
	if r.ProtoMajor != 2 {
		return "not HTTP/2: " + r.Proto
	}
	if r.URL.Path != "/3/device/a1b2c3" || r.Header.Get("apns-topic") != "org.example.app" {
		return "request " + r.URL.Path
	}
	tok, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return "token: " + err.Error()
	}
	var claims jwt.Claims
	if err := tok.Claims(&s.key.PublicKey, &claims); err != nil {
		return "signature: " + err.Error()
	}
	if claims.Issuer != "TEAM012345" || claims.IssuedAt == nil || tok.Headers[0].KeyID != "KEY0123456" {
		return "claims"
	}
	return ""
}

func (s *apnsServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.tokens...)
}

// apnsSetup is a provider with apns-token and http2 towards s, trusting its certificate.
func apnsSetup(t *testing.T, s *apnsServer) (*Provider, *fakeClock) {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "apns-ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := baseConfig(t, s.srv.URL, apnsTestAdapter)
	cfg.RequestHeaders = []string{"content-type", "apns-topic"}
	clock := newFakeClock()
	cfg.Clock, cfg.HTTP2, cfg.TrustedCAFile, cfg.ReceiptsCallback = clock, true, ca, false
	cfg.Auth = Auth{Kind: AuthAPNsToken, Key: pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		KeyID: "KEY0123456", TeamID: "TEAM012345"}
	return newTestProvider(t, cfg), clock
}

func pushOutbound() *engine.Outbound {
	out := smsOutbound()
	out.Channel, out.Recipient = engine.ChannelPush, "a1b2c3"
	out.Parts = map[string]string{"title": "Case closed", "body": "Your case is closed."}
	return out
}

func TestAPNsTokenOverHTTP2IsMadeOnceAndRenewedEvery50Minutes(t *testing.T) {
	t.Parallel()
	s := newAPNsServer(t)
	p, clock := apnsSetup(t, s)
	send := func() {
		t.Helper()
		wantOutcome(t, p.Send(context.Background(), pushOutbound()), engine.OutcomeAccepted, "")
	}
	send() // the first send opens the connection; the others share it
	var wg sync.WaitGroup
	for range 7 {
		wg.Go(send)
	}
	wg.Wait()
	clock.Advance(49 * time.Minute)
	send()
	clock.Advance(time.Minute)
	send()
	tokens := s.seen()
	if len(s.bad) != 0 {
		t.Fatalf("refused: %v", s.bad)
	}
	for i := 1; i < 9; i++ {
		if tokens[i] != tokens[0] {
			t.Fatalf("request %d carried another token within 50 minutes", i)
		}
	}
	if tokens[9] == tokens[0] {
		t.Fatal("the token was not renewed at 50 minutes")
	}
	if n := s.conns.Load(); n != 1 {
		t.Fatalf("%d connections for 10 sends, want 1 (HTTP/2 reuse)", n)
	}
}

func TestAPNsExpiredProviderTokenIsRenewedAndRetriedOnce(t *testing.T) {
	t.Parallel()
	s := newAPNsServer(t)
	p, _ := apnsSetup(t, s)
	wantOutcome(t, p.Send(context.Background(), pushOutbound()), engine.OutcomeAccepted, "")
	first := s.seen()[0]
	s.mu.Lock()
	s.expired[first] = true
	s.mu.Unlock()
	wantOutcome(t, p.Send(context.Background(), pushOutbound()), engine.OutcomeAccepted, "")
	tokens := s.seen()
	if len(tokens) != 3 || tokens[1] != first || tokens[2] == first {
		t.Fatalf("requests: %d, renewed: %t; want the expired token, then one retry with a new one", len(tokens), len(tokens) == 3 && tokens[2] != first)
	}

	// A gateway that refuses every token: one renewal, one retry, then the outcome stands.
	s.expireAll.Store(true)
	wantOutcome(t, p.Send(context.Background(), pushOutbound()), engine.OutcomeTransient, "apns.expired-provider-token")
	if n := len(s.seen()); n != 5 {
		t.Fatalf("%d requests after an always-expired send, want 5 (one retry only)", n)
	}
	if s.seen()[3] == s.seen()[4] {
		t.Fatal("the retry carried the refused token")
	}
	if len(s.bad) != 0 {
		t.Fatalf("refused: %v", s.bad)
	}
}

func TestAPNsKeyMustBeAP256Key(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(t, "https://api.push.apple.com/", apnsTestAdapter)
	cfg.Auth = Auth{Kind: AuthAPNsToken, Key: []byte("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"), KeyID: "KEY0123456", TeamID: "TEAM012345"}
	if p, err := New(cfg); err == nil {
		_ = p.Close()
		t.Fatal("New accepted a key that is not one")
	}
}
