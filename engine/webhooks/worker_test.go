package webhooks_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/engine/webhooks"
)

// wallClock is a fake clock at the wall clock's time, so that the Standard Webhooks library's
// own tolerance check passes while the test moves the clock by hand.
func wallClock() *enginetest.FakeClock {
	return enginetest.NewFakeClock(time.Now().UTC().Truncate(time.Millisecond))
}

// TestDeliveriesAreSignedAndSuperseded: every delivery passes the Standard Webhooks library's
// verification (timestamp included), carries the event id in webhook-id and in the body, and the
// message view with its sequence; changes made before a delivery collapse into the newest one.
func TestDeliveriesAreSignedAndSuperseded(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, true)
	f := newFixture(t, wallClock(), endpoint("app", rcv.srv.URL))
	f.accept(3)
	ctx := context.Background()
	if n, err := f.worker.DeliverDue(ctx); err != nil || n != 3 {
		t.Fatalf("DeliverDue = %d, %v; want 3 attempts", n, err)
	}
	got := rcv.deliveries()
	if len(got) != 3 {
		t.Fatalf("received %d deliveries, want 3", len(got))
	}
	for _, d := range got {
		want := engine.EventID(engine.EventMessageStatus, d.Body.Data.ID, 1)
		if d.ID != want || d.Body.ID != want || d.Body.Type != engine.EventMessageStatus ||
			d.Body.Data.Sequence != 1 || d.Body.Data.Status != "queued" || d.Body.Data.To["phone"] != "redacted" {
			t.Fatalf("delivery %+v, want event %s of a queued message at sequence 1, recipient redacted", d, want)
		}
	}
	// m-0 is claimed and submitted before the next delivery: one event, at sequence 3.
	f.clock.Advance(time.Second)
	page, err := f.store.ClaimPage(ctx, f.clock.Now(), engine.PageLimits{MaxEntries: 1, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(page.Claims) != 1 {
		t.Fatalf("ClaimPage = %+v, %v", page, err)
	}
	c := page.Claims[0]
	if err := f.store.Finish(ctx, engine.Finish{Lease: c.Lease, Attempt: engine.AttemptAccepted, Dispatch: engine.DispatchSubmitted,
		Report: engine.ReportNone, ProviderRef: "ref", FinishedAt: f.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.worker.DeliverDue(ctx); err != nil || n != 1 {
		t.Fatalf("DeliverDue after two changes = %d, %v; want 1 attempt", n, err)
	}
	got = rcv.deliveries()
	last := got[len(got)-1]
	if len(got) != 4 || last.Body.Data.ID != c.Message.ID || last.Body.Data.Sequence != 3 || last.Body.Data.Status != "submitted" ||
		last.ID != engine.EventID(engine.EventMessageStatus, c.Message.ID, 3) {
		t.Fatalf("after two changes received %+v, want one event at sequence 3", last)
	}
	if r := f.row("app", c.Message.ID); r.State != engine.EventDelivered || r.DeliveredSequence != 3 || r.Attempts != 1 {
		t.Fatalf("row = %+v", r)
	}
	if n, _ := f.worker.DeliverDue(ctx); n != 0 {
		t.Fatalf("DeliverDue with nothing due made %d attempts", n)
	}
}

// faultyEndpoints serves every bad behaviour an endpoint can have; redirected counts the
// requests that reached the redirect's target (none may).
func faultyEndpoints(t *testing.T) (eps map[string]string, redirected *atomic.Int64) {
	redirected = &atomic.Int64{}
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		redirected.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(target.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // a refused connection
	serve := func(h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	return map[string]string{
		"down": down.URL,
		"slow": serve(func(w http.ResponseWriter, r *http.Request) {
			select { // answers after the 1 s timeout
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusNoContent)
		}),
		"error": serve(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }),
		"gone":  serve(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusGone) }),
		"redirect": serve(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL, http.StatusTemporaryRedirect)
		}),
		"huge": serve(func(w http.ResponseWriter, r *http.Request) { writeHuge(w, http.StatusInternalServerError) }),
		"busy": serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "7200")
			w.WriteHeader(http.StatusServiceUnavailable)
		}),
	}, redirected
}

// writeHuge answers status with a 100 MiB body, streamed, until the client goes away.
func writeHuge(w http.ResponseWriter, status int) {
	w.Header().Set("Content-Type", "application/octet-stream")
	w.WriteHeader(status)
	chunk := []byte(strings.Repeat("x", 1<<20))
	for range 100 {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
}

// TestFaultyEndpointsRetryOnSchedule: a refused connection, an answer after the timeout, 500,
// 410, a redirect (not followed) and a 100 MiB answer are failed attempts, due again 5 s later;
// a longer Retry-After is honoured. The heap stays far below the size of the answer.
func TestFaultyEndpointsRetryOnSchedule(t *testing.T) {
	t.Parallel()
	urls, redirected := faultyEndpoints(t)
	var eps []webhooks.Endpoint
	for id, url := range urls {
		eps = append(eps, endpoint(id, url))
	}
	f := newFixture(t, wallClock(), eps...)
	f.accept(1)
	start := f.clock.Now()
	if n, err := f.worker.DeliverDue(context.Background()); err != nil || n != len(eps) {
		t.Fatalf("DeliverDue = %d, %v; want one attempt per endpoint", n, err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > 64<<20 {
		t.Fatalf("heap in use %d MiB after a 100 MiB answer", ms.HeapInuse>>20)
	}
	status := map[string]int{"down": 0, "slow": 0, "error": 500, "gone": 410, "redirect": 307, "huge": 500, "busy": 503}
	for id, want := range status {
		r := f.row(id, "m-0")
		wantNext := start.Add(5 * time.Second)
		if id == "busy" {
			wantNext = start.Add(2 * time.Hour)
		}
		if r.State != engine.EventPending || r.Attempts != 1 || r.LastStatus != want || !r.NextAttemptAt.Equal(wantNext) || r.LastError == "" {
			t.Errorf("%s: row %+v, want pending after 1 attempt (status %d), due at %v", id, r, want, wantNext)
		}
	}
	if n := redirected.Load(); n != 0 {
		t.Fatalf("the redirect was followed %d times", n)
	}
}

// TestScheduleEndsInFailed walks the whole schedule of an endpoint that always answers 500:
// eight attempts, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h apart, then failed. Every attempt
// carries the same webhook-id.
func TestScheduleEndsInFailed(t *testing.T) {
	t.Parallel()
	rcv := newReceiver(t, false)
	rcv.status = http.StatusInternalServerError
	f := newFixture(t, enginetest.NewFakeClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)), endpoint("app", rcv.srv.URL))
	f.accept(1)
	ctx := context.Background()
	for i := 0; i <= len(webhooks.Schedule); i++ {
		if n, err := f.worker.DeliverDue(ctx); err != nil || n != 1 {
			t.Fatalf("attempt %d: DeliverDue = %d, %v", i+1, n, err)
		}
		r := f.row("app", "m-0")
		if i == len(webhooks.Schedule) {
			if r.State != engine.EventFailed || r.Attempts != 8 {
				t.Fatalf("after the last attempt: %+v, want failed after 8", r)
			}
			break
		}
		wait := webhooks.Schedule[i]
		if r.State != engine.EventPending || r.Attempts != i+1 || !r.NextAttemptAt.Equal(f.clock.Now().Add(wait)) {
			t.Fatalf("after attempt %d: %+v, want due %v later", i+1, r, wait)
		}
		f.clock.Advance(wait - time.Millisecond)
		if n, _ := f.worker.DeliverDue(ctx); n != 0 {
			t.Fatalf("attempt %d came %v early", i+2, time.Millisecond)
		}
		f.clock.Advance(time.Millisecond)
	}
	got := rcv.deliveries()
	if len(got) != 8 {
		t.Fatalf("received %d attempts, want 8", len(got))
	}
	for _, d := range got {
		if d.ID != got[0].ID {
			t.Fatalf("webhook-id changed between attempts: %s, then %s", got[0].ID, d.ID)
		}
	}
	f.clock.Advance(48 * time.Hour)
	if n, _ := f.worker.DeliverDue(ctx); n != 0 {
		t.Fatalf("a failed event was tried again")
	}
}

// TestBadEndpointsDoNotHoldTheGoodOne runs the worker as serve does: while one endpoint holds
// every worker of its own (it never answers), one refuses connections and one streams 100 MiB
// answers, a good endpoint gets every event; the heap stays bounded throughout.
func TestBadEndpointsDoNotHoldTheGoodOne(t *testing.T) {
	t.Parallel()
	good := newReceiver(t, true)
	release := make(chan struct{})
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(stuck.Close)
	t.Cleanup(func() { closeOnce(release) })
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeHuge(w, http.StatusOK) }))
	t.Cleanup(huge.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	downURL := "http://" + ln.Addr().String()
	_ = ln.Close()
	stuckEP := endpoint("stuck", stuck.URL)
	stuckEP.Timeout = webhooks.MaxTimeout
	f := newFixture(t, wallClock(), endpoint("good", good.srv.URL), stuckEP, endpoint("down", downURL), endpoint("huge", huge.URL))
	const total = 200
	f.accept(total)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.worker.Run(ctx); close(done) }()
	var peak atomic.Uint64
	stopSampling := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	deadline := time.Now().Add(60 * time.Second)
	for len(good.deliveries()) < total && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	close(stopSampling)
	closeOnce(release)
	cancel()
	<-done
	got := good.deliveries()
	ids := map[string]bool{}
	for _, d := range got {
		ids[d.Body.Data.ID] = true
	}
	if len(ids) != total {
		t.Fatalf("the good endpoint got events of %d messages, want %d, while the stuck one held its workers", len(ids), total)
	}
	if p := peak.Load(); p > 96<<20 {
		t.Fatalf("peak heap in use %d MiB while 100 MiB answers streamed", p>>20)
	}
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}
