package storetest

import (
	"fmt"
	"testing"
	"time"

	"switchboard/engine"
)

// operatorTests are the operator actions, listings and retention (issue 8).
func operatorTests() []namedTest {
	return []namedTest{
		{"OperatorRetryStartsNewGeneration", testOperatorRetry},
		{"OperatorSettle", testOperatorSettle},
		{"OperatorCancel", testOperatorCancel},
		{"OperatorRefusesEveryOtherState", testOperatorRefusals},
		{"OperatorRefusesRetryWithoutPayload", testOperatorErasedPayload},
		{"OperatorBatchBounded", testOperatorBatchBounded},
		{"ListFiltersAndOrder", testListFilters},
		{"ListScanCursor", testListScanCursor},
		{"ListNewestPaging", testListNewestPaging},
		{"ListHeldNewest", testListHeldNewest},
		{"RetentionPayloadBoundary", testRetentionPayloadBoundary},
		{"RetentionRecords", testRetentionRecords},
		{"RetentionBatchLimit", testRetentionBatchLimit},
		{"RetentionSubmissionReceipts", testRetentionReceipts},
		{"RetentionProviderReceipts", testRetentionProviderReceipts},
		{"RetentionNeverTouchesLiveMessages", testRetentionLive},
	}
}

// inState makes message id reach dispatch state d (queued ones are not due for an hour, so
// that later claims do not take them), one second after the previous step, through the store's
// own writes. It returns the lease of the message's last claim: live for sending, spent for the
// states an attempt led to, and zero for those never claimed.
func (b *bundle) inState(id string, d engine.Dispatch) engine.LeaseRef {
	b.t.Helper()
	step := func() { b.clock.Advance(time.Second) }
	var lease engine.LeaseRef
	switch d {
	case engine.DispatchQueued:
		b.accept(id, withNextAttempt(b.clock.Now().Add(time.Hour)))
	case engine.DispatchSending:
		b.accept(id)
		step()
		lease = b.claimOne(id).Lease
	case engine.DispatchSubmitted, engine.DispatchFailed, engine.DispatchUnknown:
		b.accept(id)
		step()
		c := b.claimOne(id)
		lease = c.Lease
		switch d {
		case engine.DispatchSubmitted:
			b.mustFinish(c, engine.AttemptAccepted, d, engine.ReportNone, "ref-"+id)
		case engine.DispatchFailed:
			b.mustFinish(c, engine.AttemptPermanent, d, engine.ReportNone, "")
		default:
			b.mustFinish(c, engine.AttemptMaybeSent, d, engine.ReportNone, "")
		}
	case engine.DispatchCancelled:
		b.accept(id, withNextAttempt(b.clock.Now().Add(time.Hour)))
		b.mustCancel(id)
	case engine.DispatchExpired:
		b.accept(id, withNextAttempt(b.clock.Now().Add(time.Hour)), withExpiry(b.clock.Now().Add(time.Second)))
		step()
		if n, err := b.store.ExpireDue(b.ctx, b.clock.Now(), 100); err != nil || n != 1 {
			b.t.Fatalf("ExpireDue for %s = %d, %v", id, n, err)
		}
	default:
		b.t.Fatalf("inState: unknown state %s", d)
	}
	step()
	if got := b.message(id).Dispatch; got != d {
		b.t.Fatalf("%s is %s, want %s", id, got, d)
	}
	return lease
}

// apply applies one action at the clock's time and returns its result.
func (b *bundle) apply(a engine.Action, id, provider string) engine.OperatorResult {
	b.t.Helper()
	res, err := b.store.ApplyOperatorActions(b.ctx, []engine.OperatorAction{{Action: a, MessageID: id,
		Provider: provider, At: b.clock.Now(), Audit: engine.AuditEntry{Actor: "operator-tool"}}})
	if err != nil || len(res) != 1 {
		b.t.Fatalf("ApplyOperatorActions(%s %s) = %+v, %v", a, id, res, err)
	}
	return res[0]
}

// mustCancel cancels message id (the store's one cancel) and fails the test unless it did.
func (b *bundle) mustCancel(id string) {
	b.t.Helper()
	if r := b.apply(engine.ActionCancel, id, ""); r.Err != nil {
		b.t.Fatalf("cancel %s: %v", id, r.Err)
	}
}

// auditRecords counts the verified journal records, or -1 when the store cannot verify.
func (b *bundle) auditRecords() int64 {
	b.t.Helper()
	v, ok := b.store.(AuditVerifier)
	if !ok {
		return -1
	}
	rep, err := v.VerifyAudit(b.ctx)
	if err != nil || !rep.OK() {
		b.t.Fatalf("VerifyAudit = %+v, %v", rep, err)
	}
	return rep.Records
}

func testOperatorRetry(t *testing.T, b *bundle) {
	b.inState("m-1", engine.DispatchFailed)
	before := b.auditRecords()
	at := b.clock.Now()
	r := b.apply(engine.ActionRetry, "m-1", "sms-backup")
	if r.Err != nil || r.From != engine.DispatchFailed || r.To != engine.DispatchQueued || r.Generation != 2 || r.MessageID != "m-1" {
		t.Fatalf("retry = %+v", r)
	}
	m := b.message("m-1")
	if m.Dispatch != engine.DispatchQueued || m.Generation != 2 || m.Attempt != 0 || m.ProviderAttempts != 0 ||
		m.FallbackIndex != 0 || m.Provider != "sms-backup" || m.FinalAt != nil || m.DispatchCode != "" ||
		m.ProviderRef != "" || !m.NextAttemptAt.Equal(at) || !m.UpdatedAt.Equal(at) {
		t.Fatalf("after retry: %+v", m)
	}
	if len(m.Attempts) != 1 || m.Attempts[0].Generation != 1 || m.Attempts[0].Outcome != engine.AttemptPermanent {
		t.Fatalf("the first generation's attempt is not kept: %+v", m.Attempts)
	}
	if after := b.auditRecords(); before >= 0 && after != before+1 {
		t.Fatalf("journal grew from %d to %d records, want one record", before, after)
	}
	c := b.claimOne("m-1")
	if c.Message.Generation != 2 || c.Message.Attempt != 1 || c.Message.Provider != "sms-backup" || c.Payload.Recipient == "" {
		t.Fatalf("claim of the new generation: %+v", c)
	}
}

func testOperatorSettle(t *testing.T, b *bundle) {
	b.inState("m-sent", engine.DispatchUnknown)
	b.inState("m-not", engine.DispatchUnknown)
	at := b.clock.Now()
	if r := b.apply(engine.ActionSettleSent, "m-sent", "ignored"); r.Err != nil || r.To != engine.DispatchSubmitted || r.Generation != 1 {
		t.Fatalf("settle sent = %+v", r)
	}
	m := b.message("m-sent")
	if m.Dispatch != engine.DispatchSubmitted || m.FinalAt == nil || !m.FinalAt.Equal(at) || m.Generation != 1 || m.Provider != "sms-gateway" {
		t.Fatalf("after settle sent: %+v", m)
	}
	if r := b.apply(engine.ActionSettleNotSent, "m-not", ""); r.Err != nil || r.To != engine.DispatchQueued || r.Generation != 2 {
		t.Fatalf("settle not-sent = %+v", r)
	}
	m = b.message("m-not")
	if m.Dispatch != engine.DispatchQueued || m.Generation != 2 || m.Attempt != 0 || m.FinalAt != nil || m.Provider != "sms-gateway" {
		t.Fatalf("after settle not-sent: %+v", m)
	}
	equalIDs(t, "claimed after settle", claimIDs(b.claim(10, 1<<20)), []string{"m-not"})
}

func testOperatorCancel(t *testing.T, b *bundle) {
	b.inState("m-1", engine.DispatchQueued)
	at := b.clock.Now()
	if r := b.apply(engine.ActionCancel, "m-1", ""); r.Err != nil || r.From != engine.DispatchQueued || r.To != engine.DispatchCancelled {
		t.Fatalf("cancel = %+v", r)
	}
	if m := b.message("m-1"); m.Dispatch != engine.DispatchCancelled || m.FinalAt == nil || !m.FinalAt.Equal(at) {
		t.Fatalf("after cancel: %+v", m)
	}
}

// testOperatorRefusals applies every action to a message in every state in one batch: only
// the action's from-state changes; every other is refused, changes nothing and is not journaled.
func testOperatorRefusals(t *testing.T, b *bundle) {
	states := engine.DispatchStates()
	var actions []engine.OperatorAction
	for _, a := range engine.Actions() {
		for _, d := range states {
			id := fmt.Sprintf("m-%s-%s", a, d)
			b.inState(id, d)
			actions = append(actions, engine.OperatorAction{Action: a, MessageID: id, At: b.clock.Now(),
				Audit: engine.AuditEntry{Actor: "operator-tool"}})
		}
	}
	actions = append(actions, engine.OperatorAction{Action: engine.ActionRetry, MessageID: "m-absent", At: b.clock.Now()})
	before := b.auditRecords()
	res, err := b.store.ApplyOperatorActions(b.ctx, actions)
	if err != nil || len(res) != len(actions) {
		t.Fatalf("ApplyOperatorActions = %d results, %v", len(res), err)
	}
	applied := 0
	for i, r := range res {
		a := actions[i]
		from, to, _, _ := a.Action.Transition()
		d := states[i%len(states)]
		if a.MessageID == "m-absent" {
			wantErr(t, "retry of an absent message", r.Err, engine.ErrNotFound)
			continue
		}
		if r.MessageID != a.MessageID {
			t.Fatalf("result %d is for %s, want %s", i, r.MessageID, a.MessageID)
		}
		if d == from {
			if r.Err != nil || b.message(a.MessageID).Dispatch != to {
				t.Fatalf("%s of a %s message: %+v", a.Action, d, r)
			}
			applied++
			continue
		}
		want := engine.ErrNotEligible
		if a.Action == engine.ActionCancel {
			want = engine.ErrTerminal // the API's answers: started, or final
			if d == engine.DispatchSending || d == engine.DispatchUnknown {
				want = engine.ErrDispatchStarted
			}
		}
		wantErr(t, fmt.Sprintf("%s of a %s message", a.Action, d), r.Err, want)
		if got := b.message(a.MessageID).Dispatch; got != d {
			t.Fatalf("a refused %s moved %s from %s to %s", a.Action, a.MessageID, d, got)
		}
	}
	if applied != len(engine.Actions()) {
		t.Fatalf("%d actions applied, want one per action", applied)
	}
	if after := b.auditRecords(); before >= 0 && after != before+int64(applied) {
		t.Fatalf("journal grew by %d records, want %d", after-before, applied)
	}
}

func testOperatorErasedPayload(t *testing.T, b *bundle) {
	b.inState("m-1", engine.DispatchFailed)
	finalAt := *b.message("m-1").FinalAt
	if n := b.erase(engine.ErasePayloads, finalAt, 10); n != 1 {
		t.Fatalf("erased %d payloads, want 1", n)
	}
	r := b.apply(engine.ActionRetry, "m-1", "")
	wantErr(t, "retry without a payload", r.Err, engine.ErrNotEligible)
	if m := b.message("m-1"); m.Dispatch != engine.DispatchFailed || m.Generation != 1 {
		t.Fatalf("a refused retry changed the message: %+v", m)
	}
}

func testOperatorBatchBounded(t *testing.T, b *bundle) {
	b.inState("m-1", engine.DispatchQueued)
	actions := make([]engine.OperatorAction, engine.MaxOperatorBatch+1)
	for i := range actions {
		actions[i] = engine.OperatorAction{Action: engine.ActionCancel, MessageID: "m-1", At: b.clock.Now()}
	}
	if _, err := b.store.ApplyOperatorActions(b.ctx, actions); err == nil {
		t.Fatal("a batch over MaxOperatorBatch was accepted")
	}
	if got := b.message("m-1").Dispatch; got != engine.DispatchQueued {
		t.Fatalf("a refused batch changed m-1 to %s", got)
	}
	if res, err := b.store.ApplyOperatorActions(b.ctx, []engine.OperatorAction{{Action: "resend", MessageID: "m-1"}}); err == nil {
		t.Fatalf("an unknown action was accepted: %+v", res)
	}
}
