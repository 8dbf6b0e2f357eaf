package adaptertest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/providers/httpgw"
)

// copyAdapter copies examples/adapters/NAME's adapter files and the named cases to a folder.
func copyAdapter(t *testing.T, name string, cases ...string) string {
	t.Helper()
	src := filepath.Join("..", "..", "..", "examples", "adapters", name)
	dst := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Join(dst, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := []string{"provider.yaml", "adapter.js", "runtime-snippet.yaml"}
	for _, c := range cases {
		files = append(files, filepath.Join("testdata", c))
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// postedCallback is a callback the stand-in posted, as the callback route received it.
type postedCallback struct {
	target, signature string
	body              []byte
}

// callbackSink is the callback route: it records what arrives.
type callbackSink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []postedCallback
	more chan struct{}
}

func newCallbackSink(t *testing.T) *callbackSink {
	s := &callbackSink{more: make(chan struct{}, 100)}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.got = append(s.got, postedCallback{target: r.URL.RequestURI(), signature: r.Header.Get("x-signature"), body: body})
		s.mu.Unlock()
		s.more <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// wait returns the first n callbacks once they arrived.
func (s *callbackSink) wait(t *testing.T, n int) []postedCallback {
	t.Helper()
	for {
		s.mu.Lock()
		got := append([]postedCallback(nil), s.got...)
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-s.more:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d callbacks arrived, want %d", len(got), n)
		}
	}
}

func TestStandInAnswersAsTheCasesSay(t *testing.T) {
	dir := copyAdapter(t, "telnyx", "delivered.txtar", "undelivered.txtar")
	// undelivered.txtar answers another path, so that a request to it picks that case.
	other := filepath.Join(dir, "testdata", "undelivered.txtar")
	b, _ := os.ReadFile(other)
	if err := os.WriteFile(other, []byte(strings.Replace(string(b), "-- send1/request.http --\nPOST /v2/messages", "-- send1/request.http --\nPOST /v2/other", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	sink := newCallbackSink(t)
	secret := []byte("dev-callback-secret")
	s, err := NewStandIn(dir, StandInOptions{CallbackURL: sink.srv.URL + "/v1/provider-callbacks/sms",
		Verifier: &httpgw.VerifierConfig{Kind: httpgw.VerifierHMACSHA256Body, Header: "x-signature", Encoding: "hex", Secret: secret}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Cases(), " "); got != "delivered.txtar undelivered.txtar" {
		t.Fatalf("cases %q", got)
	}
	if !strings.HasSuffix(s.BaseURL(), "/v2/") {
		t.Fatalf("BaseURL %q lacks the snippet's path", s.BaseURL())
	}
	send := func(path string) string {
		t.Helper()
		resp, err := http.Post(strings.TrimSuffix(s.BaseURL(), "/v2/")+path, "application/json", strings.NewReader(`{"to": "+1"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("answer %d %v", resp.StatusCode, resp.Header)
		}
		return string(body)
	}
	const ref = "40385f64-5717-4562-b3fc-2c963f66afa6"
	if body := send("/v2/messages"); !strings.Contains(body, `"id": "`+ref+`-dev1"`) {
		t.Fatalf("first answer %s: want the case's reference made the answer's own", body)
	}
	got := sink.wait(t, 3)
	for i, cb := range got {
		mac := hmac.New(sha256.New, secret)
		mac.Write(cb.body)
		if cb.signature != hex.EncodeToString(mac.Sum(nil)) {
			t.Errorf("callback %d: x-signature %q does not sign its body", i+1, cb.signature)
		}
		if cb.target != "/v1/provider-callbacks/sms" || !strings.Contains(string(cb.body), ref+"-dev1") {
			t.Errorf("callback %d: %s %s", i+1, cb.target, cb.body)
		}
	}
	if !strings.Contains(string(got[0].body), "message.sent") || !strings.Contains(string(got[1].body), `"status": "delivered"`) {
		t.Fatalf("callbacks out of the case's order:\n%s\n%s", got[0].body, got[1].body)
	}
	// Another path is answered by the case that records it; an unknown one by the first case.
	if body := send("/v2/other"); !strings.Contains(body, ref+"-dev2") {
		t.Fatalf("second answer %s", body)
	}
	if got := sink.wait(t, 7); !strings.Contains(string(got[4].body), "delivery_failed") || !strings.Contains(string(got[4].body), ref+"-dev2") {
		t.Fatalf("the /v2/other send's callbacks are not undelivered.txtar's: %s", got[4].body)
	}
	if body := send("/v2/unknown"); !strings.Contains(body, ref+"-dev3") {
		t.Fatalf("third answer %s", body)
	}
	if got := sink.wait(t, 10); !strings.Contains(string(got[8].body), `"status": "delivered"`) || !strings.Contains(string(got[8].body), ref+"-dev3") {
		t.Fatalf("an unknown path is not answered by the first case: %s", got[8].body)
	}
}

func TestStandInLeavesOutRefusedCallbacks(t *testing.T) {
	// inbound-reply.txtar's callbacks 4 and 5 test the verifier (verified: false): not posted.
	dir := copyAdapter(t, "telnyx", "inbound-reply.txtar")
	sink := newCallbackSink(t)
	s, err := NewStandIn(dir, StandInOptions{CallbackURL: sink.srv.URL + "/cb",
		Verifier: &httpgw.VerifierConfig{Kind: httpgw.VerifierHMACSHA256Body, Secret: []byte("k")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(s.BaseURL()+"messages", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sink.wait(t, 4)
	s.Close() // waits for the callbacks still to come: none
	if got := sink.wait(t, 4); len(got) != 4 {
		t.Fatalf("%d callbacks posted, want 4 (6 less the 2 the case expects refused)", len(got))
	}
}

func TestStandInWithoutCases(t *testing.T) {
	dir := copyAdapter(t, "telnyx")
	if _, err := NewStandIn(dir, StandInOptions{}); !errors.Is(err, ErrNoCases) {
		t.Fatalf("no cases: %v, want ErrNoCases", err)
	}
	callbackOnly := "A callback alone.\n-- callback1/request.http --\nPOST /v1/provider-callbacks/telnyx\n\n{}\n"
	if err := os.WriteFile(filepath.Join(dir, "testdata", "alone.txtar"), []byte(callbackOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewStandIn(dir, StandInOptions{}); !errors.Is(err, ErrNoSends) {
		t.Fatalf("callback-only cases: %v, want ErrNoSends", err)
	}
}

func TestStandInRewritesWholeReferences(t *testing.T) {
	r := newReference("gw-1", 7)
	got := r.replace(`{"id": "gw-1", "other": "gw-10", "path": "/m/gw-1?x=gw-1", "note": "xgw-1"}` + "\nMessageSid=gw-1&To=1")
	want := `{"id": "gw-1-dev7", "other": "gw-10", "path": "/m/gw-1-dev7?x=gw-1-dev7", "note": "xgw-1"}` + "\nMessageSid=gw-1-dev7&To=1"
	if got != want {
		t.Fatalf("rewritten\n%s\nwant\n%s", got, want)
	}
	if short := newReference("id1", 1); short.replace(`{"id": "id1"}`) != `{"id": "id1"}` || short.to != "id1" {
		t.Fatalf("a reference under 4 characters must be kept: %+v", short)
	}
}
