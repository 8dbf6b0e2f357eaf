package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/engine/stdwebhook"
	"switchboard/engine/webhooks"
	"switchboard/store"
)

// testSecret is every test endpoint's whsec_ secret.
var testSecret = stdwebhook.EncodeSecret([]byte("a test key of thirty-two bytes..."))

func testKey() []byte {
	k, _ := stdwebhook.DecodeSecret(testSecret)
	return k
}

// fixture is a real SQLite store writing rows for the endpoints, and a worker delivering them.
type fixture struct {
	t      testing.TB
	clock  *enginetest.FakeClock
	store  *store.Store
	worker *webhooks.Worker
}

// endpoint is a test endpoint at url taking the messages of profile case-notices.
// Its timeout is 10 s, so that an endpoint that answers at once is never timed out on a loaded
// machine; a test of the timeout sets its own.
func endpoint(id, url string) webhooks.Endpoint {
	return webhooks.Endpoint{ID: id, URL: url, Key: testKey(), AccessProfiles: []string{"case-notices"},
		Timeout: 10 * time.Second, Concurrency: 4}
}

// newFixture opens the store at the clock's time and builds the worker.
func newFixture(t testing.TB, clock *enginetest.FakeClock, eps ...webhooks.Endpoint) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: clock}
	subs := make([]engine.Subscription, len(eps))
	for i, ep := range eps {
		subs[i] = engine.Subscription{Endpoint: ep.ID, MessageProfiles: ep.AccessProfiles, DeviceProfiles: ep.AccessProfiles}
	}
	var err error
	f.store, err = store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "s.db"),
		AuditKey: []byte("0123456789abcdef0123456789abcdef"), Clock: clock, Migrate: true, Subscriptions: subs,
		EventsWritten: func() {
			if f.worker != nil {
				f.worker.Wake()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.store.Close() })
	f.worker = webhooks.New(webhooks.Config{Store: f.store, Endpoints: eps, Clock: clock, PollInterval: 50 * time.Millisecond})
	return f
}

// accept accepts messages m-0 … m-(n-1) of profile case-notices.
func (f *fixture) accept(n int) {
	f.t.Helper()
	now := f.clock.Now()
	batch := make([]engine.Acceptance, n)
	for i := range batch {
		id := fmt.Sprintf("m-%d", i)
		batch[i] = engine.Acceptance{
			Idempotency: engine.IdempotencyRecord{Issuer: "iss", Subject: "sub", Key: "k-" + id, RequestHash: []byte("h"),
				Response: []byte(`{}`), ExpiresAt: now.Add(time.Hour)},
			Message: engine.Message{ID: id, Channel: engine.ChannelSMS, SenderProfile: "reminders-sms", Provider: "gw",
				RecipientKind: "phone", AccessProfile: "case-notices", AcceptedAt: now, ExpiresAt: now.Add(time.Hour)},
			Payload: engine.Payload{Recipient: "+15550100", Parts: map[string]string{"text": "hi"}},
		}
	}
	for _, r := range f.store.Accept(context.Background(), batch) {
		if r.Err != nil {
			f.t.Fatal(r.Err)
		}
	}
}

// row is endpoint's row of message id.
func (f *fixture) row(endpoint, id string) engine.EventRecord {
	f.t.Helper()
	rs, err := f.store.ListEvents(context.Background(), engine.EventQuery{Endpoint: endpoint, Limit: 500})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, r := range rs {
		if r.Subject == id {
			return r
		}
	}
	f.t.Fatalf("%s has no row for %s", endpoint, id)
	return engine.EventRecord{}
}

// received is one verified delivery.
type received struct {
	ID, Timestamp string
	Raw           []byte // the body as it came
	Body          struct {
		Type      string    `json:"type"`
		ID        string    `json:"id"`
		Timestamp time.Time `json:"timestamp"`
		Data      struct {
			ID       string `json:"id"`
			Status   string `json:"status"`
			Sequence int64  `json:"sequence"`
			To       map[string]string
		} `json:"data"`
	}
}

// receiver is an endpoint that checks each delivery with the Standard Webhooks library (not
// ours), records it and answers status.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	wh     *standardwebhooks.Webhook
	strict bool // check the timestamp against the wall clock too
	mu     sync.Mutex
	got    []received
	bad    int
	status int
}

func newReceiver(t *testing.T, strict bool) *receiver {
	wh, err := standardwebhooks.NewWebhook(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{t: t, wh: wh, strict: strict, status: http.StatusNoContent}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	verify := r.wh.VerifyIgnoringTimestamp
	if r.strict {
		verify = r.wh.Verify
	}
	var got received
	err := verify(body, req.Header)
	if err == nil {
		err = json.Unmarshal(body, &got.Body)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil || req.Header.Get("Content-Type") != "application/json" {
		r.bad++
		r.t.Errorf("delivery refused by the Standard Webhooks library: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	got.ID, got.Timestamp, got.Raw = req.Header.Get("webhook-id"), req.Header.Get("webhook-timestamp"), body
	r.got = append(r.got, got)
	w.WriteHeader(r.status)
}

func (r *receiver) deliveries() []received {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]received(nil), r.got...)
}
