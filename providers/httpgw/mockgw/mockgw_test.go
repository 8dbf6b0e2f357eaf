package mockgw

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

var secret = []byte("dev-callback-secret")

// receiver is a callback endpoint that checks signatures and hands reports to a channel.
type receiver struct {
	*httptest.Server
	reports  chan map[string]string
	hits     chan struct{} // one per post received
	attempts atomic.Int32
}

// newReceiver answers the first failFirst posts with 500, then 204.
func newReceiver(t *testing.T, failFirst int32) *receiver {
	t.Helper()
	rc := &receiver{reports: make(chan map[string]string, 16), hits: make(chan struct{}, 64)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n := rc.attempts.Add(1)
		rc.hits <- struct{}{}
		if n <= failFirst {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		mac := hmac.New(sha256.New, secret)
		mac.Write(body)
		got, err := hex.DecodeString(r.Header.Get("X-Signature"))
		if err != nil || !hmac.Equal(got, mac.Sum(nil)) || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		var report map[string]string
		if json.Unmarshal(body, &report) != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			return
		}
		rc.reports <- report
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func startGateway(t *testing.T, opts Options) (*Gateway, string) {
	t.Helper()
	g := New(opts)
	base, err := g.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	return g, base
}

// giveUpOnceTaken is a client's context that ends as soon as the gateway has taken reference.
// A fixed client timeout would race the take itself: on a loaded machine the request can still
// be on its way when the timeout ends it, and the gateway then never sees it.
func giveUpOnceTaken(t *testing.T, g *Gateway, reference string) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		defer cancel()
		for g.Seen(reference) == 0 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
	}()
	return ctx
}

func postMessage(ctx context.Context, base, reference string) (*http.Response, map[string]string, error) {
	body := `{"to":"+15550123","from":"+15550100","text":"hello","reference":"` + reference + `"}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", reference)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var answer map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	return resp, answer, nil
}

func TestAcceptsAndPostsASignedReceipt(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 0)
	g, base := startGateway(t, Options{CallbackURL: rc.URL + "/v1/provider-callbacks/sms-gateway", CallbackSecret: secret})
	resp, answer, err := postMessage(context.Background(), base, "msg-1")
	if err != nil || resp.StatusCode != http.StatusCreated || !strings.HasPrefix(answer["id"], "gw-") {
		t.Fatalf("answer %v %v %v", resp, answer, err)
	}
	report := <-rc.reports
	if report["id"] != answer["id"] || report["status"] != "delivered" {
		t.Fatalf("report %v for reference %s", report, answer["id"])
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if s := g.Stats(); s.Requests != 1 || s.Unique != 1 || s.Duplicates != 0 || s.ReceiptsPosted != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestCountsDuplicates(t *testing.T) {
	t.Parallel()
	g, base := startGateway(t, Options{})
	for _, ref := range []string{"msg-1", "msg-2", "msg-1", "msg-1", "msg-3", "msg-3"} {
		if resp, _, err := postMessage(context.Background(), base, ref); err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("post %s: %v %v", ref, resp, err)
		}
	}
	if s := g.Stats(); s.Requests != 6 || s.Unique != 3 || s.Duplicates != 2 {
		t.Fatalf("stats %+v, want 6 requests, 3 unique, 2 duplicated", s)
	}
	if g.Seen("msg-1") != 3 || g.Seen("msg-2") != 1 || g.Seen("nope") != 0 {
		t.Fatalf("seen msg-1 %d msg-2 %d", g.Seen("msg-1"), g.Seen("msg-2"))
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	g := New(Options{})
	t.Cleanup(func() { _ = g.Close() })
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	cases := []struct {
		method, path, body string
		status             int
	}{
		{http.MethodPost, "/messages", `{"to":"+1"}`, http.StatusBadRequest},
		{http.MethodPost, "/messages", `not json`, http.StatusBadRequest},
		{http.MethodGet, "/messages", ``, http.StatusMethodNotAllowed},
		{http.MethodPost, "/elsewhere", `{}`, http.StatusNotFound},
		{http.MethodPost, "/api/messages", `{"to":"+1","text":"t","reference":"r"}`, http.StatusCreated},
	}
	for _, tc := range cases {
		req, _ := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s %s: %d, want %d", tc.method, tc.path, tc.body, resp.StatusCode, tc.status)
		}
	}
}

func TestFailTransientIsNotTaken(t *testing.T) {
	t.Parallel()
	g, base := startGateway(t, Options{FailTransient: 1})
	resp, _, err := postMessage(context.Background(), base, "msg-1")
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("answer %v %v", resp, err)
	}
	if s := g.Stats(); g.Seen("msg-1") != 0 || s.Refused != 1 || s.Requests != 1 {
		t.Fatalf("stats %+v seen %d", s, g.Seen("msg-1"))
	}
}

func TestTimeoutAfterReceiveTakesButNeverAnswers(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 0)
	g, base := startGateway(t, Options{TimeoutAfterReceive: 1, CallbackURL: rc.URL, CallbackSecret: secret})
	ctx := giveUpOnceTaken(t, g, "msg-1")
	if _, _, err := postMessage(ctx, base, "msg-1"); err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("post returned %v, want the client's own cancel", err)
	}
	<-rc.reports // the gateway took it, so it reports it
	if s := g.Stats(); g.Seen("msg-1") != 1 || s.Stalled != 1 {
		t.Fatalf("stats %+v", s)
	}
}

func TestReceiptRetriesAreBounded(t *testing.T) {
	t.Parallel()
	flaky := newReceiver(t, 2)
	_, base := startGateway(t, Options{CallbackURL: flaky.URL, CallbackSecret: secret, ReceiptRetryDelay: time.Millisecond, ReceiptAttempts: 3})
	if resp, _, err := postMessage(context.Background(), base, "msg-1"); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("post: %v %v", resp, err)
	}
	<-flaky.reports
	if n := flaky.attempts.Load(); n != 3 {
		t.Fatalf("receipt posted %d times, want 3 (two 500s, then 204)", n)
	}

	down := newReceiver(t, 1<<30)
	g2 := New(Options{CallbackURL: down.URL, CallbackSecret: secret, ReceiptRetryDelay: time.Millisecond, ReceiptAttempts: 3})
	base2, err := g2.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if resp, _, err := postMessage(context.Background(), base2, "msg-1"); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("post: %v %v", resp, err)
	}
	for range 3 {
		<-down.hits
	}
	_ = g2.Close() // waits for the workers: the third failure is recorded before it returns
	if n, s := down.attempts.Load(), g2.Stats(); n != 3 || s.ReceiptsFailed != 1 || s.ReceiptsPosted != 0 {
		t.Fatalf("%d posts, stats %+v; want 3 posts and one failed receipt", n, s)
	}
}

func TestCloseReleasesStalledRequestsAndIsIdempotent(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 0)
	g := New(Options{TimeoutAfterReceive: 1, CallbackURL: rc.URL, CallbackSecret: secret})
	base, err := g.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := postMessage(context.Background(), base, "msg-1")
		done <- err
	}()
	<-rc.reports // queued when the gateway took the message, before it stalled
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("a stalled request got an answer")
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// postKeyed posts one message with an Idempotency-Key header (none when key is empty) and
// returns the status and the gateway reference answered; a transport error reads as status 0.
func postKeyed(base, reference, key string) (int, string) {
	body := `{"to":"+15550123","from":"+15550100","text":"hello","reference":"` + reference + `"}`
	req, _ := http.NewRequest(http.MethodPost, base+"messages", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, ""
	}
	defer resp.Body.Close()
	var answer map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&answer)
	return resp.StatusCode, answer["id"]
}

func TestIdempotencyKeysReplayTheFirstAnswer(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, 0)
	g, base := startGateway(t, Options{IdempotencyKeys: true, CallbackURL: rc.URL, CallbackSecret: secret})
	status, first := postKeyed(base, "msg-1", "msg-1.1")
	if status != http.StatusCreated || first == "" {
		t.Fatalf("first post: %d %q", status, first)
	}
	if status, again := postKeyed(base, "msg-1", "msg-1.1"); status != http.StatusCreated || again != first {
		t.Fatalf("replay: %d %q, want 201 %q", status, again, first)
	}
	if report := <-rc.reports; report["id"] != first {
		t.Fatalf("report %v, want one for %s", report, first)
	}
	if g.Seen("msg-1") != 1 || !slices.Equal(g.Keys("msg-1"), []string{"msg-1.1"}) {
		t.Fatalf("after a replay: seen %d, keys %v; want one take under msg-1.1", g.Seen("msg-1"), g.Keys("msg-1"))
	}
	// Another key for the same message is a second take: the ledger shows both keys.
	if status, second := postKeyed(base, "msg-1", "msg-1.2"); status != http.StatusCreated || second == first {
		t.Fatalf("new key: %d %q, want a new reference", status, second)
	}
	<-rc.reports
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	s := g.Stats()
	if s.Requests != 3 || s.Replayed != 1 || s.Unique != 1 || s.Duplicates != 1 || s.ReceiptsPosted != 2 {
		t.Fatalf("stats %+v; want 3 requests, 1 replayed, msg-1 taken twice, 2 reports", s)
	}
	if !slices.Equal(g.Keys("msg-1"), []string{"msg-1.1", "msg-1.2"}) || g.Keys("nope") != nil {
		t.Fatalf("keys %v", g.Keys("msg-1"))
	}
}

func TestIdempotencyKeysOffTakesARepeatedKeyAgain(t *testing.T) {
	t.Parallel()
	g, base := startGateway(t, Options{})
	_, first := postKeyed(base, "msg-1", "k")
	_, second := postKeyed(base, "msg-1", "k")
	postKeyed(base, "msg-2", "")
	if first == second || g.Seen("msg-1") != 2 || g.Stats().Replayed != 0 {
		t.Fatalf("refs %q %q, seen %d, stats %+v: want two takes", first, second, g.Seen("msg-1"), g.Stats())
	}
	if !slices.Equal(g.Keys("msg-1"), []string{"k"}) || len(g.Keys("msg-2")) != 0 {
		t.Fatalf("keys msg-1 %v msg-2 %v", g.Keys("msg-1"), g.Keys("msg-2"))
	}
}

// Concurrent requests with one key, all waiting out the latency together, make one take.
func TestIdempotencyKeysConcurrentRepeatsTakeOnce(t *testing.T) {
	t.Parallel()
	g, base := startGateway(t, Options{IdempotencyKeys: true, Latency: 20 * time.Millisecond})
	const n = 16
	refs := make(chan string, n)
	for range n {
		go func() {
			_, ref := postKeyed(base, "msg-1", "msg-1.1")
			refs <- ref
		}()
	}
	first := <-refs
	for range n - 1 {
		if ref := <-refs; ref != first || ref == "" {
			t.Fatalf("answers %q and %q for one key", first, ref)
		}
	}
	if s := g.Stats(); g.Seen("msg-1") != 1 || s.Replayed != n-1 {
		t.Fatalf("seen %d, stats %+v; want one take and %d replays", g.Seen("msg-1"), s, n-1)
	}
}

// With LatencyAfterTake, a client that gives up while the gateway waits has still sent its
// message; sending it again under the same key gets the answer it lost.
func TestLatencyAfterTakeLosesTheAnswerNotTheMessage(t *testing.T) {
	t.Parallel()
	g, base := startGateway(t, Options{IdempotencyKeys: true, LatencyAfterTake: true, Latency: 2 * time.Second})
	ctx := giveUpOnceTaken(t, g, "msg-1") // well inside the latency
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"messages",
		strings.NewReader(`{"to":"+15550123","text":"hello","reference":"msg-1"}`))
	req.Header.Set("Idempotency-Key", "msg-1.1")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d before the latency passed", resp.StatusCode)
	}
	if g.Seen("msg-1") != 1 {
		t.Fatalf("seen %d: the abandoned request was not taken", g.Seen("msg-1"))
	}
	if status, ref := postKeyed(base, "msg-1", "msg-1.1"); status != http.StatusCreated || ref == "" {
		t.Fatalf("resend: %d %q", status, ref)
	}
	if s := g.Stats(); g.Seen("msg-1") != 1 || s.Replayed != 1 {
		t.Fatalf("seen %d, stats %+v; want one take and one replay", g.Seen("msg-1"), s)
	}
}

// TestInboundPostsASignedMessage: POST /inbound makes the gateway post a signed inbound message
// to the callback URL at once, and answers with the callback's status.
func TestInboundPostsASignedMessage(t *testing.T) {
	t.Parallel()
	inboundSecret := []byte("inbound-secret")
	got := make(chan map[string]string, 1)
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, inboundSecret)
		mac.Write(body)
		if r.Header.Get("X-Signature") != hex.EncodeToString(mac.Sum(nil)) {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		var m map[string]string
		_ = json.Unmarshal(body, &m)
		got <- m
		w.WriteHeader(http.StatusNoContent)
	}))
	defer cb.Close()
	g := New(Options{CallbackURL: cb.URL, CallbackSecret: inboundSecret})
	defer g.Close()
	srv := httptest.NewServer(g)
	defer srv.Close()
	resp, err := http.Post(srv.URL+"/inbound", "application/json", strings.NewReader(`{"from":"+447700900123","text":"YES"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /inbound = %d", resp.StatusCode)
	}
	m := <-got
	if m["type"] != "inbound" || m["from"] != "+447700900123" || m["text"] != "YES" || !strings.HasPrefix(m["id"], "gw-in-") || m["receivedAt"] == "" {
		t.Fatalf("posted %+v", m)
	}
	resp, err = http.Post(srv.URL+"/inbound", "application/json", strings.NewReader(`{"text":"no sender"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("POST /inbound without from = %d, want 400", resp.StatusCode)
	}
}
