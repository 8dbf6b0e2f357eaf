package storetest

import (
	"testing"
	"time"

	"switchboard/engine"
)

// reasonTests are a message's reason (why it did not end delivered or submitted): written by
// the statement of the final move, kept with the record, cleared by a new start.
func reasonTests() []namedTest {
	return []namedTest{
		{"FinishRecordsReason", testReasonFinish},
		{"FinishRefusesUnknownBy", testReasonFinishRefused},
		{"ReceiptRecordsReason", testReasonReceipt},
		{"KeptReceiptRecordsReason", testReasonKeptReceipt},
		{"CancelRecordsReason", testReasonCancel},
		{"ExpiryRecordsReason", testReasonExpired},
		{"RetryAndSettleClearReason", testReasonCleared},
		{"ReasonOutlivesPayload", testReasonErasure},
	}
}

// finishWith closes claim c moving its message to d with reason r.
func (b *bundle) finishWith(c engine.Claim, outcome engine.AttemptOutcome, d engine.Dispatch, r engine.Reason) error {
	return b.store.Finish(b.ctx, engine.Finish{
		Lease: c.Lease, Attempt: outcome, Code: r.Code, Dispatch: d, Report: c.Message.Report,
		NextAttemptAt: b.clock.Now(), ProviderAttempts: c.Message.ProviderAttempts + 1,
		Provider: c.Message.Provider, DispatchCode: r.Code, Reason: r, FinishedAt: b.clock.Now(),
		Audit: engine.AuditEntry{Actor: "worker", MessageID: c.Message.ID, At: b.clock.Now()},
	})
}

// wantReason fails the test unless message id has reason want, read alone and in a listing.
func (b *bundle) wantReason(what, id string, want engine.Reason) {
	b.t.Helper()
	if got := b.message(id).Reason; got != want {
		b.t.Fatalf("%s: %s has reason %+v, want %+v", what, id, got, want)
	}
	for _, m := range b.list(engine.MessageQuery{Limit: engine.MaxListLimit}).Messages {
		if m.ID == id && m.Reason != want {
			b.t.Fatalf("%s: %s is listed with reason %+v, want %+v", what, id, m.Reason, want)
		}
	}
}

func testReasonFinish(t *testing.T, b *bundle) {
	cases := []struct {
		id      string
		outcome engine.AttemptOutcome
		d       engine.Dispatch
		r       engine.Reason
	}{
		{"m-failed", engine.AttemptPermanent, engine.DispatchFailed, engine.Reason{Code: "pigeonpost.handset-off", By: engine.ReasonByProvider}},
		{"m-unknown", engine.AttemptMaybeSent, engine.DispatchUnknown, engine.Reason{Code: "http.timeout", By: engine.ReasonByProvider}},
		{"m-expired", engine.AttemptTransient, engine.DispatchExpired, engine.Reason{Code: engine.CodeMessageExpired, By: engine.ReasonBySwitchboard}},
		{"m-retried", engine.AttemptTransient, engine.DispatchQueued, engine.Reason{}},
	}
	for _, c := range cases {
		b.accept(c.id)
		b.clock.Advance(time.Second)
		if err := b.finishWith(b.claimOne(c.id), c.outcome, c.d, c.r); err != nil {
			t.Fatalf("finish %s: %v", c.id, err)
		}
		b.wantReason("after its finish", c.id, c.r)
	}
	// A message queued again after an attempt has no reason until it ends.
	b.clock.Advance(time.Second)
	c := b.claimOne("m-retried")
	if !c.Message.Reason.None() {
		t.Fatalf("claimed with reason %+v", c.Message.Reason)
	}
	r := engine.Reason{Code: engine.CodeAttemptsExhausted, By: engine.ReasonBySwitchboard}
	if err := b.finishWith(c, engine.AttemptTransient, engine.DispatchFailed, r); err != nil {
		t.Fatalf("finish m-retried: %v", err)
	}
	b.wantReason("out of attempts", "m-retried", r)
}

func testReasonFinishRefused(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.clock.Advance(time.Second)
	c := b.claimOne("m-1")
	for _, r := range []engine.Reason{{Code: "x.y", By: "gateway"}, {Code: "x.y"}, {By: engine.ReasonByProvider}} {
		if err := b.finishWith(c, engine.AttemptPermanent, engine.DispatchFailed, r); err == nil {
			t.Fatalf("finish with reason %+v was not refused", r)
		}
	}
	if m := b.message("m-1"); m.Dispatch != engine.DispatchSending || !m.Reason.None() {
		t.Fatalf("a refused finish wrote: %s, reason %+v", m.Dispatch, m.Reason)
	}
}

func testReasonReceipt(t *testing.T, b *bundle) {
	b.submitted("m-coded", "ref-1")
	b.submitted("m-bare", "ref-2")
	b.submitted("m-delivered", "ref-3")
	b.wantReason("submitted", "m-coded", engine.Reason{})
	b.receipts("sms-gateway",
		engine.Receipt{ProviderReference: "ref-1", Report: engine.ReportSent, Code: "pigeonpost.queued"},
		engine.Receipt{ProviderReference: "ref-1", Report: engine.ReportUndelivered, Code: "pigeonpost.handset-off"},
		engine.Receipt{ProviderReference: "ref-2", Report: engine.ReportUndelivered},
		engine.Receipt{ProviderReference: "ref-3", Report: engine.ReportDelivered, Code: "pigeonpost.ok"})
	b.wantReason("undelivered with a code", "m-coded", engine.Reason{Code: "pigeonpost.handset-off", By: engine.ReasonByProvider})
	b.wantReason("undelivered without a code", "m-bare", engine.Reason{Code: engine.CodeProviderRefused, By: engine.ReasonByProvider})
	b.wantReason("delivered", "m-delivered", engine.Reason{})
	// A stale receipt moves nothing, the reason included.
	b.receipts("sms-gateway", engine.Receipt{ProviderReference: "ref-1", Report: engine.ReportUndelivered, Code: "pigeonpost.other"})
	b.wantReason("after a stale receipt", "m-coded", engine.Reason{Code: "pigeonpost.handset-off", By: engine.ReasonByProvider})
	if m := b.message("m-coded"); m.Status() != "failed" {
		t.Fatalf("m-coded is %s", m.Status())
	}
}

func testReasonKeptReceipt(t *testing.T, b *bundle) {
	b.receipts("sms-gateway",
		engine.Receipt{ProviderReference: "ref-early", Report: engine.ReportSent, Code: "pigeonpost.queued"},
		engine.Receipt{ProviderReference: "ref-early", Report: engine.ReportUndelivered, Code: "pigeonpost.handset-off"})
	b.submitted("m-1", "ref-early")
	if m := b.message("m-1"); m.Report != engine.ReportUndelivered {
		t.Fatalf("kept receipts not applied: report %s", m.Report)
	}
	b.wantReason("kept receipts applied at finish", "m-1", engine.Reason{Code: "pigeonpost.handset-off", By: engine.ReasonByProvider})
}

func testReasonCancel(t *testing.T, b *bundle) {
	b.inState("m-operator", engine.DispatchQueued)
	b.inState("m-submitter", engine.DispatchQueued)
	b.mustCancel("m-operator") // an action without a reason: an operator's
	res, err := b.store.ApplyOperatorActions(b.ctx, []engine.OperatorAction{{Action: engine.ActionCancel,
		MessageID: "m-submitter", At: b.clock.Now(), Reason: engine.CancelReason(false),
		Audit: engine.AuditEntry{Actor: "caller:submitter"}}})
	if err != nil || len(res) != 1 || res[0].Err != nil {
		t.Fatalf("cancel by the submitter = %+v, %v", res, err)
	}
	b.wantReason("cancelled by an operator", "m-operator", engine.Reason{Code: engine.CodeMessageCancelled, By: engine.ReasonByOperator})
	b.wantReason("cancelled at its submitter's request", "m-submitter", engine.Reason{Code: engine.CodeMessageCancelled, By: engine.ReasonBySwitchboard})
	b.inState("m-bad", engine.DispatchQueued)
	if _, err := b.store.ApplyOperatorActions(b.ctx, []engine.OperatorAction{{Action: engine.ActionCancel,
		MessageID: "m-bad", At: b.clock.Now(), Reason: engine.Reason{Code: "x", By: "nobody"}}}); err == nil {
		t.Fatal("a cancel with an unknown By was not refused")
	}
	if m := b.message("m-bad"); m.Dispatch != engine.DispatchQueued {
		t.Fatalf("a refused cancel wrote: %s", m.Dispatch)
	}
}

func testReasonExpired(t *testing.T, b *bundle) {
	b.inState("m-1", engine.DispatchExpired)
	b.wantReason("expired by the sweep", "m-1", engine.Reason{Code: engine.CodeMessageExpired, By: engine.ReasonBySwitchboard})
}

func testReasonCleared(t *testing.T, b *bundle) {
	failed := engine.Reason{Code: "pigeonpost.number-invalid", By: engine.ReasonByProvider}
	unknown := engine.Reason{Code: engine.CodeLeaseLapsed, By: engine.ReasonBySwitchboard}
	for id, st := range map[string]struct {
		d engine.Dispatch
		o engine.AttemptOutcome
		r engine.Reason
	}{
		"m-retry":    {engine.DispatchFailed, engine.AttemptPermanent, failed},
		"m-sent":     {engine.DispatchUnknown, engine.AttemptInterrupt, unknown},
		"m-not-sent": {engine.DispatchUnknown, engine.AttemptInterrupt, unknown},
	} {
		b.accept(id)
		b.clock.Advance(time.Second)
		if err := b.finishWith(b.claimOne(id), st.o, st.d, st.r); err != nil {
			t.Fatalf("finish %s: %v", id, err)
		}
		b.wantReason("before the action", id, st.r)
	}
	for id, a := range map[string]engine.Action{"m-retry": engine.ActionRetry,
		"m-sent": engine.ActionSettleSent, "m-not-sent": engine.ActionSettleNotSent} {
		if r := b.apply(a, id, ""); r.Err != nil {
			t.Fatalf("%s %s: %v", a, id, r.Err)
		}
		b.wantReason("after "+string(a), id, engine.Reason{})
	}
}

func testReasonErasure(t *testing.T, b *bundle) {
	b.inState("m-1", engine.DispatchExpired)
	if n := b.erase(engine.ErasePayloads, b.finalAt("m-1"), 100); n != 1 {
		t.Fatalf("erased %d payloads, want 1", n)
	}
	b.wantReason("payload erased", "m-1", engine.Reason{Code: engine.CodeMessageExpired, By: engine.ReasonBySwitchboard})
}
