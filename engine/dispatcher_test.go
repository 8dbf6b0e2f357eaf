package engine_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/packages"
	"switchboard/store"
)

// dispatchEnv is a dispatcher on a real SQLite store with scripted providers and a fake clock.
type dispatchEnv struct {
	t         *testing.T
	clock     *enginetest.FakeClock
	store     *store.Store
	submitter *engine.Submitter
	disp      *engine.Dispatcher
	providers map[string]*enginetest.ScriptedProvider
	pkg       *packages.Package
	intake    *engine.Intake
}

const peerRecipient = "+15550100123"

// newDispatchEnv builds a package by hand: profile "sms" on provider "primary" with fallback
// "backup" (5 attempts, 30 s doubling to 3600 s), and profile "sms-retry" that resends
// maybe-sent messages.
func newDispatchEnv(t *testing.T, primary, backup *enginetest.ScriptedProvider) *dispatchEnv {
	t.Helper()
	retry := packages.RetryPolicy{MaximumAttempts: 5, InitialDelaySeconds: 30, MaximumDelaySeconds: 3600}
	pkg := &packages.Package{
		Providers: []*packages.Provider{{ID: "primary", Kind: "http"}, {ID: "backup", Kind: "http"}},
		SenderProfiles: []*packages.SenderProfile{
			{ID: "sms", Channel: "sms", Provider: "primary", FallbackProviders: []string{"backup"}, Sender: "+15550100",
				MaximumSegments: 3, Retry: retry, OnUncertain: "hold", DefaultExpirySeconds: 86400},
			{ID: "sms-alone", Channel: "sms", Provider: "primary", Sender: "+15550100",
				MaximumSegments: 3, Retry: retry, OnUncertain: "hold", DefaultExpirySeconds: 86400},
			{ID: "sms-retry", Channel: "sms", Provider: "primary", Sender: "+15550100", MaximumSegments: 3,
				Retry: retry, OnUncertain: "retry", AcceptDuplicates: true, DefaultExpirySeconds: 86400},
		},
		AccessProfiles: []*packages.AccessProfile{{ID: "app", Role: "sender", Clients: []string{"app"},
			SenderProfiles: []string{"sms", "sms-alone", "sms-retry"}, AllowDirectContent: true, RequestsPerMinute: 60, Burst: 10}},
	}
	clock := enginetest.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "d.db"),
		AuditKey: []byte("0123456789abcdef0123456789abcdef"), Clock: clock, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := &dispatchEnv{t: t, clock: clock, store: st, pkg: pkg,
		providers: map[string]*enginetest.ScriptedProvider{"primary": primary, "backup": backup}}
	provs := map[string]engine.Provider{"primary": primary}
	if backup != nil {
		provs["backup"] = backup
	}
	e.disp = engine.NewDispatcher(engine.DispatcherConfig{Package: pkg, Store: st, Providers: provs, Clock: clock,
		Logger: slog.New(slog.DiscardHandler), Concurrency: 2, BatchSize: 10, MaxPayloadBytes: 1 << 20,
		PollInterval: time.Second, LeaseFor: time.Minute, Jitter: func() float64 { return 0.5 }})
	e.intake = &engine.Intake{}
	e.submitter = engine.NewSubmitter(engine.SubmitterConfig{Package: pkg, Store: st, Clock: clock,
		PayloadRetention: 7 * 24 * time.Hour, ReceiptWindow: 7 * 24 * time.Hour, Intake: e.intake})
	return e
}

// submit accepts one direct-content SMS and returns its id.
func (e *dispatchEnv) submit(profile, key string, mutate func(*engine.SubmitRequest)) string {
	e.t.Helper()
	req := &engine.SubmitRequest{SenderProfile: profile, To: engine.Recipient{Phone: peerRecipient},
		Content: &engine.DirectContent{Text: "Your appointment is tomorrow."}}
	if mutate != nil {
		mutate(req)
	}
	res, err := e.submitter.Submit(context.Background(), engine.Caller{Issuer: "i", Subject: "s", Pseudonym: "caller:x",
		Profile: "app", Role: "sender"}, key, requestBody(e.t, `{"k":"`+key+`"}`), req)
	if err != nil {
		e.t.Fatalf("submit: %v", err)
	}
	return res.MessageID
}

func (e *dispatchEnv) due() int {
	e.t.Helper()
	n, err := e.disp.DispatchDue(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *dispatchEnv) message(id string) *engine.Message {
	e.t.Helper()
	m, err := e.store.Message(context.Background(), id)
	if err != nil {
		e.t.Fatal(err)
	}
	return m
}

func transient() engine.Outcome {
	return engine.Outcome{Class: engine.OutcomeTransient, Code: "http.503"}
}

func TestSubmitterCountsEverySubmissionItTakes(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t, enginetest.NewScriptedProvider("http", transient()), nil)
	e.submit("sms", "k1", nil)
	e.submit("sms", "k1", nil) // a replay is a submission too: the caller waits on it all the same
	if _, err := e.submitter.Submit(context.Background(), engine.Caller{Profile: "nobody"}, "k2", requestBody(t, `{}`),
		&engine.SubmitRequest{}); err == nil {
		t.Fatal("a caller without an access profile must be refused")
	}
	if got := e.intake.Started(); got != 3 {
		t.Fatalf("Intake counted %d submissions, want 3 (two accepted, one refused)", got)
	}
}

func TestDispatchBackoffScheduleThenFailed(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t, enginetest.NewScriptedProvider("http", transient()), nil)
	id := e.submit("sms-alone", "k1", nil)
	// With jitter fixed at 0.5, the delays are 3/4 of 30 s, 60 s, 120 s, 240 s.
	delays := []time.Duration{22500 * time.Millisecond, 45 * time.Second, 90 * time.Second, 180 * time.Second}
	if n := e.due(); n != 1 {
		t.Fatalf("first attempt: %d sends", n)
	}
	for i, d := range delays {
		e.clock.Advance(d - time.Millisecond)
		if n := e.due(); n != 0 {
			t.Fatalf("retry %d sent %s early", i+1, time.Millisecond)
		}
		e.clock.Advance(time.Millisecond)
		if n := e.due(); n != 1 {
			t.Fatalf("retry %d: %d sends, want 1", i+1, n)
		}
	}
	m := e.message(id)
	if m.Dispatch != engine.DispatchFailed || len(m.Attempts) != 5 || m.DispatchCode != "http.503" {
		t.Fatalf("after 5 transient attempts: dispatch %s, %d attempts, code %q", m.Dispatch, len(m.Attempts), m.DispatchCode)
	}
	e.clock.Advance(24 * time.Hour)
	if n := e.due(); n != 0 {
		t.Fatalf("a failed message was sent again")
	}
}

func TestDispatchRetryAfterAndFallbackOrder(t *testing.T) {
	t.Parallel()
	primary := enginetest.NewScriptedProvider("http", engine.Outcome{Class: engine.OutcomePermanent, Code: "http.400"},
		engine.Outcome{Class: engine.OutcomeTransient, RetryAfter: 10 * time.Minute})
	backup := enginetest.NewScriptedProvider("http", engine.Outcome{Class: engine.OutcomeAccepted, ProviderReference: "b-1"})
	e := newDispatchEnv(t, primary, backup)
	id := e.submit("sms", "k1", nil)
	e.due()
	if m := e.message(id); m.Dispatch != engine.DispatchQueued || m.NextAttemptAt.Sub(e.clock.Now()) != 10*time.Minute {
		t.Fatalf("Retry-After not honoured: %s next at %s", m.Dispatch, m.NextAttemptAt)
	}
	e.clock.Advance(10 * time.Minute)
	// The primary refuses for good: the backup is tried at once, in the same pass.
	if n := e.due(); n != 2 {
		t.Fatalf("%d sends, want primary then backup", n)
	}
	m := e.message(id)
	if m.Dispatch != engine.DispatchSubmitted || m.ProviderRef != "b-1" || m.Provider != "backup" {
		t.Fatalf("fallback: %+v", m)
	}
	if len(primary.Calls()) != 2 || len(backup.Calls()) != 1 {
		t.Fatalf("calls: primary %d backup %d", len(primary.Calls()), len(backup.Calls()))
	}
}

func TestDispatchExpiry(t *testing.T) {
	t.Parallel()
	p := enginetest.NewScriptedProvider("http", transient())
	e := newDispatchEnv(t, p, nil)
	start := e.clock.Now()
	before := e.submit("sms-alone", "before", func(r *engine.SubmitRequest) {
		nb, ex := start.Add(time.Hour), start.Add(90*time.Minute)
		r.NotBefore, r.ExpiresAt = &nb, &ex
	})
	during := e.submit("sms-alone", "during", func(r *engine.SubmitRequest) {
		ex := start.Add(30 * time.Second)
		r.ExpiresAt = &ex
	})
	if n := e.due(); n != 1 {
		t.Fatalf("first pass: %d sends, want only the message without notBefore", n)
	}
	e.clock.Advance(22500 * time.Millisecond)
	if n := e.due(); n != 1 {
		t.Fatalf("second attempt: %d sends", n)
	}
	// The next retry would fall after expiresAt: the message expires instead.
	if m := e.message(during); m.Dispatch != engine.DispatchExpired || len(m.Attempts) != 2 {
		t.Fatalf("during retries: %s with %d attempts", m.Dispatch, len(m.Attempts))
	}
	e.clock.Set(start.Add(2 * time.Hour))
	if n := e.due(); n != 0 {
		t.Fatalf("an expired message was sent")
	}
	if m := e.message(before); m.Dispatch != engine.DispatchExpired {
		t.Fatalf("due after expiry: %s", m.Dispatch)
	}
	if got := len(p.Calls()); got != 2 {
		t.Fatalf("provider saw %d sends, want 2", got)
	}
}

func TestDispatchUncertainHoldAndRetry(t *testing.T) {
	t.Parallel()
	p := enginetest.NewScriptedProvider("http", engine.Outcome{Class: engine.OutcomeAccepted, ProviderReference: "r"},
		engine.Outcome{Class: engine.OutcomeMaybeSent, Code: "http.timeout"},
		engine.Outcome{Class: engine.OutcomeMaybeSent, Code: "http.timeout"})
	e := newDispatchEnv(t, p, nil)
	held := e.submit("sms-alone", "hold", nil)
	e.due()
	if m := e.message(held); m.Dispatch != engine.DispatchUnknown {
		t.Fatalf("maybe-sent under hold: %s", m.Dispatch)
	}
	resent := e.submit("sms-retry", "retry", nil)
	e.due()
	if m := e.message(resent); m.Dispatch != engine.DispatchQueued {
		t.Fatalf("maybe-sent under retry: %s", m.Dispatch)
	}
	e.clock.Advance(time.Hour)
	e.due()
	if m := e.message(resent); m.Dispatch != engine.DispatchSubmitted || m.Generation != 1 || len(m.Attempts) != 2 {
		t.Fatalf("resent: %s gen %d attempts %d", m.Dispatch, m.Generation, len(m.Attempts))
	}
	e.clock.Advance(48 * time.Hour)
	e.due()
	for _, c := range p.Calls() {
		if c.MessageID == held && c.Attempt > 1 {
			t.Fatalf("an unknown message was sent again")
		}
	}
}

func TestDispatchRecoversLapsedLeaseAsInterrupted(t *testing.T) {
	t.Parallel()
	p := enginetest.NewScriptedProvider("http", engine.Outcome{Class: engine.OutcomeAccepted})
	e := newDispatchEnv(t, p, nil)
	id := e.submit("sms-alone", "crash", nil)
	// Another process claims the message and dies mid-send.
	page, err := e.store.ClaimPage(context.Background(), e.clock.Now(), engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(page.Claims) != 1 {
		t.Fatalf("claim: %v %d", err, len(page.Claims))
	}
	if n := e.due(); n != 0 {
		t.Fatalf("a message under a live lease was sent")
	}
	e.clock.Advance(61 * time.Second)
	e.due()
	m := e.message(id)
	if m.Dispatch != engine.DispatchUnknown || len(m.Attempts) != 1 || m.Attempts[0].Outcome != engine.AttemptInterrupt {
		t.Fatalf("lapsed lease: %s %+v", m.Dispatch, m.Attempts)
	}
	if len(p.Calls()) != 0 {
		t.Fatalf("a maybe-sent message was sent again")
	}
	// The dead worker's late outcome changes nothing.
	err = e.store.Finish(context.Background(), engine.Finish{Lease: page.Claims[0].Lease, Attempt: engine.AttemptAccepted,
		Dispatch: engine.DispatchSubmitted, Report: engine.ReportNone, FinishedAt: e.clock.Now(), Provider: "primary"})
	if err == nil {
		t.Fatal("a stale lease finished a message")
	}
}

func TestDispatchCancelWhileWaitingForRetry(t *testing.T) {
	t.Parallel()
	p := enginetest.NewScriptedProvider("http", transient())
	e := newDispatchEnv(t, p, nil)
	id := e.submit("sms-alone", "cancel", nil)
	e.due()
	op, err := engine.NewOperator(engine.OperatorConfig{Store: e.store, Package: e.pkg, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := op.Cancel(context.Background(), e.message(id), engine.Caller{Pseudonym: "caller:x", Role: "sender"}); err != nil {
		t.Fatalf("cancel while waiting for retry: %v", err)
	}
	e.clock.Advance(time.Hour)
	if n := e.due(); n != 0 {
		t.Fatal("a cancelled message was sent")
	}
	if m := e.message(id); m.Dispatch != engine.DispatchCancelled {
		t.Fatalf("dispatch %s", m.Dispatch)
	}
}
