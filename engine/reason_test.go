package engine_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
)

// runOut sends message id until it leaves the queue (at most 20 passes, the clock moved an
// hour between them).
func (e *dispatchEnv) runOut(id string) *engine.Message {
	e.t.Helper()
	for range 20 {
		e.due()
		if m := e.message(id); m.Dispatch != engine.DispatchQueued {
			return m
		}
		e.clock.Advance(time.Hour)
	}
	e.t.Fatalf("%s is still queued", id)
	return nil
}

func wantReason(t *testing.T, m *engine.Message, status string, want engine.Reason) {
	t.Helper()
	if m.Status() != status || m.Reason != want {
		t.Fatalf("%s: status %s, reason %+v; want %s, %+v", m.ID, m.Status(), m.Reason, status, want)
	}
}

// TestReasonOfEachAttemptEnding runs a message to each end an attempt can give it, on a real
// store, and reads the reason it is left with.
func TestReasonOfEachAttemptEnding(t *testing.T) {
	t.Parallel()
	provider := func(code string) engine.Reason { return engine.Reason{Code: code, By: engine.ReasonByProvider} }
	own := func(code string) engine.Reason { return engine.Reason{Code: code, By: engine.ReasonBySwitchboard} }
	for _, c := range []struct {
		name    string
		outcome engine.Outcome
		status  string
		want    engine.Reason
	}{
		{"refused with the adapter's code", engine.Outcome{Class: engine.OutcomePermanent, Code: "pigeonpost.number-invalid"},
			"failed", provider("pigeonpost.number-invalid")},
		{"refused without a code", engine.Outcome{Class: engine.OutcomePermanent}, "failed", provider(engine.CodeProviderRefused)},
		{"attempts exhausted with the gateway's code", transient(), "failed", provider("http.503")},
		{"attempts exhausted without a code", engine.Outcome{Class: engine.OutcomeTransient}, "failed", own(engine.CodeAttemptsExhausted)},
		{"maybe sent, held", engine.Outcome{Class: engine.OutcomeMaybeSent, Code: "http.timeout"}, "unknown", provider("http.timeout")},
		{"maybe sent without a code", engine.Outcome{Class: engine.OutcomeMaybeSent}, "unknown", own(engine.CodeOutcomeUncertain)},
		{"an outcome nobody knows", engine.Outcome{Class: "sideways", Code: "pigeonpost.odd"}, "unknown", own(engine.CodeOutcomeUnclassified)},
		{"accepted", engine.Outcome{Class: engine.OutcomeAccepted, ProviderReference: "r"}, "submitted", engine.Reason{}},
		{"accepted and delivered at once", engine.Outcome{Class: engine.OutcomeAccepted, Report: engine.ReportDelivered}, "delivered", engine.Reason{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newDispatchEnv(t, enginetest.NewScriptedProvider("http", c.outcome), nil)
			wantReason(t, e.runOut(e.submit("sms-alone", "k", nil)), c.status, c.want)
		})
	}
}

// TestReasonOfSwitchboardsOwnEndings: the endings no provider had a word in.
func TestReasonOfSwitchboardsOwnEndings(t *testing.T) {
	t.Parallel()
	own := func(code string) engine.Reason { return engine.Reason{Code: code, By: engine.ReasonBySwitchboard} }
	e := newDispatchEnv(t, enginetest.NewScriptedProvider("http", transient()), nil)
	start := e.clock.Now()
	retryLate := e.submit("sms-alone", "retry-late", func(r *engine.SubmitRequest) {
		ex := start.Add(30 * time.Second)
		r.ExpiresAt = &ex
	})
	swept := e.submit("sms-alone", "swept", func(r *engine.SubmitRequest) {
		nb, ex := start.Add(time.Hour), start.Add(90*time.Minute)
		r.NotBefore, r.ExpiresAt = &nb, &ex
	})
	e.due()
	e.clock.Advance(22500 * time.Millisecond)
	e.due() // the next retry would fall after expiresAt
	wantReason(t, e.message(retryLate), "expired", own(engine.CodeMessageExpired))
	e.clock.Set(start.Add(2 * time.Hour))
	e.due() // the maintenance pass's sweep
	wantReason(t, e.message(swept), "expired", own(engine.CodeMessageExpired))

	// Profile gone from the package, and no provider connected under the message's id.
	gone := e.submit("sms-alone", "gone", nil)
	e.pkg.SenderProfiles = e.pkg.SenderProfiles[:1]
	wantReason(t, e.runOut(gone), "failed", own(engine.CodeProfileUnknown))

	alone := newDispatchEnv(t, enginetest.NewScriptedProvider("http", transient()), nil)
	noBackup := alone.submit("sms", "no-backup", nil) // its fallback, backup, is not connected
	wantReason(t, alone.runOut(noBackup), "failed", own(engine.CodeProviderUnavailable))
}

// TestReasonOfALapsedLease: the process sending it died mid-send; Switchboard holds it.
func TestReasonOfALapsedLease(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t, enginetest.NewScriptedProvider("http", engine.Outcome{Class: engine.OutcomeAccepted}), nil)
	id := e.submit("sms-alone", "crash", nil)
	if _, err := e.store.ClaimPage(context.Background(), e.clock.Now(), engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(61 * time.Second)
	e.due()
	wantReason(t, e.message(id), "unknown", engine.Reason{Code: engine.CodeLeaseLapsed, By: engine.ReasonBySwitchboard})
}

// TestReasonOfAReceipt: the code of the adapter's receipt() reaches the message it reports
// undelivered, by the provider; a receipt without one reads provider.refused.
func TestReasonOfAReceipt(t *testing.T) {
	t.Parallel()
	accepted := func(ref string) engine.Outcome {
		return engine.Outcome{Class: engine.OutcomeAccepted, ProviderReference: ref}
	}
	e := newDispatchEnv(t, enginetest.NewScriptedProvider("http", accepted("r-other"), accepted("r-1"), accepted("r-2"), accepted("r-3")), nil)
	ids := []string{e.submit("sms-alone", "a", nil), e.submit("sms-alone", "b", nil), e.submit("sms-alone", "c", nil)}
	e.due()
	rec, err := engine.NewReceipts(engine.ReceiptsConfig{Store: e.store, Clock: e.clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// Which message got which reference is the order of the sends.
	coded, bare, delivered := e.message(ids[0]), e.message(ids[1]), e.message(ids[2])
	for _, m := range []*engine.Message{coded, bare, delivered} {
		wantReason(t, m, "submitted", engine.Reason{})
	}
	if _, err := rec.Record(context.Background(), "primary", []engine.Receipt{
		{ProviderReference: coded.ProviderRef, Report: engine.ReportUndelivered, Code: "pigeonpost.handset-off"},
		{ProviderReference: bare.ProviderRef, Report: engine.ReportUndelivered},
		{ProviderReference: delivered.ProviderRef, Report: engine.ReportDelivered, Code: "pigeonpost.delivered"},
	}); err != nil {
		t.Fatal(err)
	}
	wantReason(t, e.message(coded.ID), "failed", engine.Reason{Code: "pigeonpost.handset-off", By: engine.ReasonByProvider})
	wantReason(t, e.message(bare.ID), "failed", engine.Reason{Code: engine.CodeProviderRefused, By: engine.ReasonByProvider})
	wantReason(t, e.message(delivered.ID), "delivered", engine.Reason{})
}

// TestReasonOfOperatorActions: a cancel says who cancelled; a retry or a settle clears the
// reason, and the new generation ends with its own.
func TestReasonOfOperatorActions(t *testing.T) {
	t.Parallel()
	e := newDispatchEnv(t, enginetest.NewScriptedProvider("http", engine.Outcome{Class: engine.OutcomeAccepted},
		engine.Outcome{Class: engine.OutcomePermanent, Code: "pigeonpost.number-invalid"},
		engine.Outcome{Class: engine.OutcomeMaybeSent, Code: "http.timeout"}), nil)
	op, err := engine.NewOperator(engine.OperatorConfig{Store: e.store, Package: e.pkg, Clock: e.clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	failed := e.runOut(e.submit("sms-alone", "failed", nil))
	wantReason(t, failed, "failed", engine.Reason{Code: "pigeonpost.number-invalid", By: engine.ReasonByProvider})
	unknown := e.runOut(e.submit("sms-alone", "unknown", nil))
	wantReason(t, unknown, "unknown", engine.Reason{Code: "http.timeout", By: engine.ReasonByProvider})

	m, _, err := op.Apply(ctx, engine.ActionRetry, failed.ID, engine.ActorOperatorTool)
	if err != nil {
		t.Fatal(err)
	}
	wantReason(t, m, "queued", engine.Reason{})
	m, _, err = op.Apply(ctx, engine.ActionSettleSent, unknown.ID, engine.ActorOperatorTool)
	if err != nil {
		t.Fatal(err)
	}
	wantReason(t, m, "submitted", engine.Reason{})
	wantReason(t, e.runOut(failed.ID), "submitted", engine.Reason{})

	byOperator := e.submit("sms-alone", "cancel-tool", func(r *engine.SubmitRequest) {
		nb := e.clock.Now().Add(time.Hour)
		r.NotBefore = &nb
	})
	bySubmitter := e.submit("sms-alone", "cancel-app", func(r *engine.SubmitRequest) {
		nb := e.clock.Now().Add(time.Hour)
		r.NotBefore = &nb
	})
	byOperatorAPI := e.submit("sms-alone", "cancel-api", func(r *engine.SubmitRequest) {
		nb := e.clock.Now().Add(time.Hour)
		r.NotBefore = &nb
	})
	if m, _, err = op.Apply(ctx, engine.ActionCancel, byOperator, engine.ActorOperatorTool); err != nil {
		t.Fatal(err)
	}
	wantReason(t, m, "cancelled", engine.Reason{Code: engine.CodeMessageCancelled, By: engine.ReasonByOperator})
	if m, err = op.Cancel(ctx, e.message(bySubmitter), engine.Caller{Pseudonym: "caller:x", Role: "sender"}); err != nil {
		t.Fatal(err)
	}
	wantReason(t, m, "cancelled", engine.Reason{Code: engine.CodeMessageCancelled, By: engine.ReasonBySwitchboard})
	if m, err = op.Cancel(ctx, e.message(byOperatorAPI), engine.Caller{Pseudonym: "caller:op", Role: "operator"}); err != nil {
		t.Fatal(err)
	}
	wantReason(t, m, "cancelled", engine.Reason{Code: engine.CodeMessageCancelled, By: engine.ReasonByOperator})
}
