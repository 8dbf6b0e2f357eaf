package httpgw

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
)

// quickstartAdapter is shaped like examples/quickstart's sms-gateway adapter.
const quickstartAdapter = `
function prepare(message, profile) {
  return {target: "messages",
    headers: {"content-type": "application/json", "x-request-id": message.messageId},
    bodyFormat: "json",
    body: {to: message.recipient, from: profile.sender, text: message.parts.text, reference: message.messageId}};
}
function interpret(response) {
  if (response.status >= 200 && response.status < 300 && response.body !== null && typeof response.body === "object") {
    return {outcome: "accepted", providerReference: String(response.body.id)};
  }
  return null;
}
function receipt(request) {
  var b = request.json;
  if (b === null || typeof b !== "object") { return null; }
  if (Array.isArray(b)) {
    return b.map(function (e) { return {providerReference: e.id, report: e.status}; });
  }
  return {providerReference: b.id, report: b.status};
}
`

// specAdapter lets a test dictate prepare's output (the JSON in part "spec") and interpret's
// (the member "verdict" of a JSON answer; null without one).
const specAdapter = `
function prepare(message, profile) { return JSON.parse(message.parts.spec); }
function interpret(response) {
  if (response.body !== null && typeof response.body === "object" && response.body.verdict !== undefined) {
    return response.body.verdict;
  }
  return null;
}
function receipt(request) { return null; }
`

// fakeClock is an engine.Clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// seenRequest is one request a test gateway received.
type seenRequest struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   []byte
}

// gateway is an httptest server that records requests and answers with answer.
type gateway struct {
	*httptest.Server
	mu   sync.Mutex
	seen []seenRequest
}

func newGateway(t *testing.T, answer http.HandlerFunc) *gateway {
	t.Helper()
	g := &gateway{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g.mu.Lock()
		g.seen = append(g.seen, seenRequest{Method: r.Method, Path: r.URL.EscapedPath(), RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: body})
		g.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		answer(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

func (g *gateway) requests() []seenRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]seenRequest(nil), g.seen...)
}

// answerJSON answers status with a JSON body.
func answerJSON(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// baseConfig is a provider config for the gateway at base (a path under it).
func baseConfig(t *testing.T, base, source string) Config {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse base: %v", err)
	}
	return Config{
		ID:               "sms-gateway",
		Source:           source,
		RequestHeaders:   []string{"content-type", "x-request-id", "idempotency-key"},
		ResponseHeaders:  []string{"x-rate-limit-remaining"},
		ReceiptsCallback: true,
		BaseURL:          u,
		Timeout:          2 * time.Second,
		Auth:             Auth{Kind: AuthNone},
		Clock:            newFakeClock(),
	}
}

// newTestProvider builds a provider and closes it at cleanup.
func newTestProvider(t *testing.T, cfg Config) *Provider {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// smsOutbound is a realistic outbound SMS.
func smsOutbound() *engine.Outbound {
	return &engine.Outbound{
		MessageID:  "msg-0001",
		Generation: 1,
		Attempt:    1,
		Channel:    engine.ChannelSMS,
		Recipient:  "+15550123",
		Parts:      map[string]string{"text": "Your appointment is on 2026-03-02 at 09:30."},
		SenderProfile: engine.SenderProfileView{
			ID: "reminders-sms", Channel: engine.ChannelSMS, Sender: "+15550100", MaximumSegments: 3,
		},
		IdempotencyKey: "idem-1",
	}
}

// specOutbound is an outbound whose prepare output is spec (for specAdapter).
func specOutbound(t *testing.T, spec any) *engine.Outbound {
	t.Helper()
	b, err := json.Marshal(spec)
	if err != nil {
		t.Fatalf("marshal spec: %v", err)
	}
	out := smsOutbound()
	out.Parts = map[string]string{"spec": string(b)}
	return out
}

// wantOutcome fails the test unless got has class and code.
func wantOutcome(t *testing.T, got engine.Outcome, class engine.OutcomeClass, code string) {
	t.Helper()
	if got.Class != class || got.Code != code {
		t.Fatalf("outcome = %s/%q (reason %q), want %s/%q", got.Class, got.Code, got.Reason, class, code)
	}
}

// hmacHex is the hex HMAC-SHA256 of body.
func hmacHex(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
