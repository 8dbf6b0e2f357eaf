package httpgw

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/scripting"
)

func TestConnectionRefusedIsTransient(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	p := newTestProvider(t, baseConfig(t, "http://"+addr+"/", quickstartAdapter))
	wantOutcome(t, p.Send(context.Background(), smsOutbound()), engine.OutcomeTransient, CodeConnectFailed)
}

// TestTransportReasonsLeaveTheURLOut: a baseUrl may carry a credential in its path (a Telegram
// bot token from the environment); the reason of a failed exchange, which is stored and
// logged, names the method and the cause but not the URL.
func TestTransportReasonsLeaveTheURLOut(t *testing.T) {
	t.Parallel()
	const secret = "bot123456:AAE-secret-token"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/" + secret + "/"
	_ = ln.Close()
	lost := newGateway(t, func(w http.ResponseWriter, _ *http.Request) {
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			_ = conn.Close()
		}
	})
	for _, tc := range []struct {
		base  string
		class engine.OutcomeClass
		code  string
	}{
		{refused, engine.OutcomeTransient, CodeConnectFailed},
		{lost.URL + "/" + secret + "/", engine.OutcomeMaybeSent, CodeConnectionLost},
	} {
		p := newTestProvider(t, baseConfig(t, tc.base, quickstartAdapter))
		o := p.Send(context.Background(), smsOutbound())
		wantOutcome(t, o, tc.class, tc.code)
		if strings.Contains(o.Reason, "secret-token") || !strings.HasPrefix(o.Reason, "Post: ") {
			t.Errorf("%s: reason %q shows the URL (or lost the method)", tc.code, o.Reason)
		}
	}
}

// stallingGateway reads each request completely, reports it on received, then answers only
// when the client gives up (or the test ends).
func stallingGateway(t *testing.T) (*gateway, chan struct{}) {
	t.Helper()
	received := make(chan struct{}, 16)
	done := make(chan struct{})
	g := newGateway(t, func(_ http.ResponseWriter, r *http.Request) {
		received <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	})
	t.Cleanup(func() { close(done) }) // runs before the server's Close (cleanups are LIFO)
	return g, received
}

func TestServerHangingPastTheTimeoutIsMaybeSent(t *testing.T) {
	t.Parallel()
	g, _ := stallingGateway(t)
	cfg := baseConfig(t, g.URL, quickstartAdapter)
	cfg.Timeout = 150 * time.Millisecond
	p := newTestProvider(t, cfg)
	wantOutcome(t, p.Send(context.Background(), smsOutbound()), engine.OutcomeMaybeSent, CodeTimeout)
	if n := len(g.requests()); n != 1 {
		t.Fatalf("gateway saw %d requests, want 1", n)
	}
}

func TestContextCancelledAfterTheRequestLeftIsMaybeSent(t *testing.T) {
	t.Parallel()
	g, received := stallingGateway(t)
	p := newTestProvider(t, baseConfig(t, g.URL, quickstartAdapter))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-received
		cancel()
	}()
	wantOutcome(t, p.Send(ctx, smsOutbound()), engine.OutcomeMaybeSent, CodeCancelled)
}

func TestServerClosingAfterReadingIsMaybeSent(t *testing.T) {
	t.Parallel()
	g := newGateway(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	p := newTestProvider(t, baseConfig(t, g.URL, quickstartAdapter))
	wantOutcome(t, p.Send(context.Background(), smsOutbound()), engine.OutcomeMaybeSent, CodeConnectionLost)
}

func TestServerClosingMidAnswerIsMaybeSent(t *testing.T) {
	t.Parallel()
	g := newGateway(t, func(w http.ResponseWriter, _ *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_, _ = io.WriteString(buf, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"id\":")
		_ = buf.Flush()
		_ = conn.Close()
	})
	p := newTestProvider(t, baseConfig(t, g.URL, quickstartAdapter))
	wantOutcome(t, p.Send(context.Background(), smsOutbound()), engine.OutcomeMaybeSent, CodeConnectionLost)
}

func TestCancelledBeforeSendIsTransientAndSendsNothing(t *testing.T) {
	t.Parallel()
	g := newGateway(t, answerJSON(http.StatusCreated, `{"id":"r"}`))
	p := newTestProvider(t, baseConfig(t, g.URL, quickstartAdapter))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantOutcome(t, p.Send(ctx, smsOutbound()), engine.OutcomeTransient, CodeCancelled)
	out := smsOutbound()
	out.Deadline = time.Now().Add(-time.Second)
	wantOutcome(t, p.Send(context.Background(), out), engine.OutcomeTransient, CodeTimeout)
	if n := len(g.requests()); n != 0 {
		t.Fatalf("gateway saw %d requests", n)
	}
}

func TestPrepareFailures(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, source string
		class        engine.OutcomeClass
		code         string
	}{
		{"deadline is transient", `function prepare(m, p) { for (;;) {} }`, engine.OutcomeTransient, "script.deadline"},
		{"throw is permanent", `function prepare(m, p) { throw new Error("no"); }`, engine.OutcomePermanent, "script.failed"},
		{"null is permanent", `function prepare(m, p) { return null; }`, engine.OutcomePermanent, "script.output-invalid"},
		{"wrong shape is permanent", `function prepare(m, p) { return {target: 5}; }`, engine.OutcomePermanent, "script.output-invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, answerJSON(http.StatusCreated, `{}`))
			cfg := baseConfig(t, g.URL, tc.source)
			cfg.ReceiptsCallback = false
			cfg.Limits = scripting.Limits{Deadlines: map[string]time.Duration{"prepare": 20 * time.Millisecond}}
			p := newTestProvider(t, cfg)
			wantOutcome(t, p.Send(context.Background(), smsOutbound()), tc.class, tc.code)
			if n := len(g.requests()); n != 0 {
				t.Fatalf("gateway saw %d requests", n)
			}
		})
	}
}

func TestConcurrencyLimitIsHonoured(t *testing.T) {
	t.Parallel()
	const limit, sends = 2, 6
	var mu sync.Mutex
	inFlight, peak := 0, 0
	arrived := make(chan struct{}, sends)
	release := make(chan struct{})
	g := newGateway(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		mu.Lock()
		inFlight--
		mu.Unlock()
		answerJSON(http.StatusCreated, `{"id":"r"}`)(w, r)
	})
	cfg := baseConfig(t, g.URL, quickstartAdapter)
	cfg.ConcurrencyLimit = limit
	p := newTestProvider(t, cfg)
	var wg sync.WaitGroup
	for range sends {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o := p.Send(context.Background(), smsOutbound()); o.Class != engine.OutcomeAccepted {
				t.Errorf("send: %+v", o)
			}
		}()
	}
	// Let requests through one at a time, each only after the limit's worth has arrived.
	for i := range sends {
		<-arrived
		if i >= limit-1 {
			release <- struct{}{}
		}
	}
	for range limit - 1 {
		release <- struct{}{}
	}
	wg.Wait()
	if peak > limit {
		t.Fatalf("%d requests were in flight at once, limit %d", peak, limit)
	}
}

func TestRateWaitThatWouldPassTheDeadlineIsTransient(t *testing.T) {
	t.Parallel()
	g := newGateway(t, answerJSON(http.StatusCreated, `{"id":"r"}`))
	cfg := baseConfig(t, g.URL, quickstartAdapter)
	cfg.RatePerSecond = 0.01 // one token per 100 s, burst 1
	p := newTestProvider(t, cfg)
	wantOutcome(t, p.Send(context.Background(), smsOutbound()), engine.OutcomeAccepted, "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	wantOutcome(t, p.Send(ctx, smsOutbound()), engine.OutcomeTransient, CodeRateLimited)
	if n := len(g.requests()); n != 1 {
		t.Fatalf("gateway saw %d requests, want 1", n)
	}
}

func TestCloseIsIdempotentAndLaterSendsAreTransient(t *testing.T) {
	t.Parallel()
	g := newGateway(t, answerJSON(http.StatusCreated, `{"id":"r"}`))
	p, err := New(baseConfig(t, g.URL, quickstartAdapter))
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind() != "http" {
		t.Fatalf("Kind = %q", p.Kind())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	wantOutcome(t, p.Send(context.Background(), smsOutbound()), engine.OutcomeTransient, CodeClosed)
}
