package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/packages"
)

// TestDecideLapsed decides lapsed leases at times the fake clock sets: the same rules as a live
// maybe-sent outcome, expiry included, with the attempt closed as interrupted.
func TestDecideLapsed(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	retry := packages.RetryPolicy{MaximumAttempts: 3, InitialDelaySeconds: 30, MaximumDelaySeconds: 3600}
	profile := func(onUncertain string) *packages.SenderProfile {
		return &packages.SenderProfile{ID: "p", Provider: "primary", Retry: retry, OnUncertain: onUncertain}
	}
	cases := []struct {
		name      string
		sp        *packages.SenderProfile
		attempts  int           // provider attempts before the lapsed one
		expiresIn time.Duration // from start
		lapsedAt  time.Duration // from start, when recovery runs
		want      engine.Dispatch
		wantNext  time.Duration // from the recovery, when queued
	}{
		{"hold", profile("hold"), 0, 24 * time.Hour, 2 * time.Minute, engine.DispatchUnknown, 0},
		{"retry with attempts left", profile("retry"), 0, 24 * time.Hour, 2 * time.Minute, engine.DispatchQueued, 15 * time.Second},
		{"retry with attempts exhausted", profile("retry"), 2, 24 * time.Hour, 2 * time.Minute, engine.DispatchUnknown, 0},
		{"retry past expiresAt", profile("retry"), 0, 90 * time.Second, 2 * time.Minute, engine.DispatchExpired, 0},
		{"retry whose next attempt falls after expiresAt", profile("retry"), 0, 130 * time.Second, 2 * time.Minute, engine.DispatchExpired, 0},
		{"hold past expiresAt stays for an operator", profile("hold"), 0, 90 * time.Second, 2 * time.Minute, engine.DispatchUnknown, 0},
		{"a profile the package lost holds", nil, 0, 24 * time.Hour, 2 * time.Minute, engine.DispatchUnknown, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clock := enginetest.NewFakeClock(start)
			m := &engine.Message{ID: "m-1", Dispatch: engine.DispatchSending, Report: engine.ReportNone, SenderProfile: "p",
				Provider: "primary", Generation: 1, Attempt: c.attempts + 1, ProviderAttempts: c.attempts,
				ExpiresAt: start.Add(c.expiresIn), NextAttemptAt: start}
			now := clock.Advance(c.lapsedAt)
			d := engine.DecideLapsed(m, c.sp, now, 0)
			if d.Dispatch != c.want || d.Attempt != engine.AttemptInterrupt || d.Code != engine.CodeLeaseLapsed ||
				d.ProviderAttempts != c.attempts+1 || d.Provider != "primary" {
				t.Fatalf("decided %+v; want %s, interrupted, %s", d, c.want, engine.CodeLeaseLapsed)
			}
			if c.want == engine.DispatchQueued && d.NextAttemptAt.Sub(now) != c.wantNext {
				t.Fatalf("next attempt in %s, want %s", d.NextAttemptAt.Sub(now), c.wantNext)
			}
			// The same as a live maybe-sent outcome would get.
			live := engine.Decide(m, c.sp, engine.Outcome{Class: engine.OutcomeMaybeSent}, now, 0)
			if live.Dispatch != d.Dispatch || !live.NextAttemptAt.Equal(d.NextAttemptAt) {
				t.Fatalf("a lapsed lease decided %s at %s, a live maybe-sent outcome %s at %s",
					d.Dispatch, d.NextAttemptAt, live.Dispatch, live.NextAttemptAt)
			}
		})
	}
}

// TestRecoverLapsedLeasePastExpiry lets a claim lapse after its message's expiresAt under
// onUncertain: retry: recovery expires it at once (it is never queued, never sent), and the
// store records the interrupted attempt.
func TestRecoverLapsedLeasePastExpiry(t *testing.T) {
	t.Parallel()
	p := enginetest.NewScriptedProvider("http", engine.Outcome{Class: engine.OutcomeAccepted})
	e := newDispatchEnv(t, p, nil)
	start := e.clock.Now()
	id := e.submit("sms-retry", "lapsed", func(r *engine.SubmitRequest) {
		ex := start.Add(90 * time.Second)
		r.ExpiresAt = &ex
	})
	// Another process claims it and dies mid-send; its lease lapses after the expiry.
	if page, err := e.store.ClaimPage(context.Background(), start, engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute); err != nil || len(page.Claims) != 1 {
		t.Fatalf("claim: %v %+v", err, page)
	}
	e.clock.Advance(2 * time.Minute)
	if n := e.due(); n != 0 {
		t.Fatalf("%d sends after the expiry", n)
	}
	m := e.message(id)
	if m.Dispatch != engine.DispatchExpired || m.FinalAt == nil || len(m.Attempts) != 1 ||
		m.Attempts[0].Outcome != engine.AttemptInterrupt || m.Attempts[0].Code != engine.CodeLeaseLapsed {
		t.Fatalf("after recovery: %s, final %v, attempts %+v; want expired with one interrupted attempt", m.Dispatch, m.FinalAt, m.Attempts)
	}
	if len(p.Calls()) != 0 {
		t.Fatal("the provider saw a send")
	}
}

// reconcileSpy counts reconcile passes.
type reconcileSpy struct{ calls atomic.Int64 }

func (r *reconcileSpy) ReconcileReceipts(context.Context, time.Time, int) (int, error) {
	r.calls.Add(1)
	return 0, nil
}

// storeWithReconcile is a store that could also reconcile receipts, to prove that the
// dispatcher never finds that out for itself.
type storeWithReconcile struct {
	engine.Store
	reconcileSpy
}

// TestDispatcherReconcilesThroughItsReconciler checks that stranded receipts are applied by the
// Reconciler the dispatcher is wired with, and only by it.
func TestDispatcherReconcilesThroughItsReconciler(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t, enginetest.NewScriptedProvider("http", transient()), nil)
	wired := &reconcileSpy{}
	st := &storeWithReconcile{Store: e.store}
	for _, r := range []engine.ReceiptReconciler{wired, nil} {
		d := engine.NewDispatcher(engine.DispatcherConfig{Package: e.pkg, Store: st, Clock: e.clock,
			Providers: map[string]engine.Provider{}, Concurrency: 1, BatchSize: 10, MaxPayloadBytes: 1 << 20,
			PollInterval: time.Second, LeaseFor: time.Minute, Reconciler: r})
		if _, err := d.DispatchDue(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if wired.calls.Load() != 1 || st.calls.Load() != 0 {
		t.Fatalf("reconcile passes: %d through the Reconciler (want 1), %d found on the store (want 0)",
			wired.calls.Load(), st.calls.Load())
	}
}
