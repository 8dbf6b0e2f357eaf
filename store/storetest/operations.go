package storetest

import (
	"errors"
	"testing"
	"time"

	"switchboard/engine"
)

// operationTests are the bulk operations and the message journal of the operator API; they
// run on stores that implement engine.OperationStore and engine.Journal.
func operationTests() []namedTest {
	return []namedTest{
		{"OperationLifecycle", testOperationLifecycle},
		{"OperationTakeOver", testOperationTakeOver},
		{"MessageJournal", testMessageJournal},
	}
}

func (b *bundle) operations() engine.OperationStore {
	b.t.Helper()
	s, ok := b.store.(engine.OperationStore)
	if !ok {
		b.t.Skip("the store keeps no operations")
	}
	return s
}

func (b *bundle) newOperation(id, token string) engine.Operation {
	now := b.clock.Now()
	return engine.Operation{
		ID: id, Action: engine.ActionRetry, Actor: "operator-7f",
		Selection: engine.Selection{Status: "failed", SenderProfile: "reminders-sms", Before: now.Add(-time.Hour)},
		State:     engine.OperationRunning, Total: 7, CreatedAt: now, UpdatedAt: now,
		Lease: engine.LeaseRef{Token: token, ExpiresAt: now.Add(time.Minute)},
	}
}

// testOperationLifecycle creates an operation, records batches under its lease, refuses a
// write under another token, and finishes it.
func testOperationLifecycle(t *testing.T, b *bundle) {
	ops := b.operations()
	if _, err := ops.Operation(b.ctx, "op-none"); !errors.Is(err, engine.ErrOperationNotFound) {
		t.Fatalf("Operation(absent) error %v, want ErrOperationNotFound", err)
	}
	created := b.newOperation("op-1", "tok-1")
	if err := ops.CreateOperation(b.ctx, created, engine.AuditEntry{Event: "operation.started", Actor: "operator-7f", Outcome: "retry 7"}); err != nil {
		t.Fatal(err)
	}
	got, err := ops.Operation(b.ctx, "op-1")
	if err != nil {
		t.Fatal(err)
	}
	if got.State != engine.OperationRunning || got.Total != 7 || got.Action != engine.ActionRetry ||
		got.Selection != created.Selection || got.Actor != "operator-7f" || got.Lease.Token != "tok-1" || got.FinishedAt != nil {
		t.Fatalf("created operation reads %+v", got)
	}
	b.clock.Advance(time.Second)
	step := engine.OperationProgress{ID: "op-1", Token: "tok-1", Done: 4, Failed: 1, Cursor: "41",
		State: engine.OperationRunning, At: b.clock.Now(), LeaseUntil: b.clock.Now().Add(time.Minute)}
	if err := ops.RecordOperationProgress(b.ctx, step); err != nil {
		t.Fatal(err)
	}
	stolen := step
	stolen.Token = "tok-other"
	if err := ops.RecordOperationProgress(b.ctx, stolen); !errors.Is(err, engine.ErrLeaseLost) {
		t.Fatalf("progress under another token: %v, want ErrLeaseLost", err)
	}
	b.clock.Advance(time.Second)
	last := engine.OperationProgress{ID: "op-1", Token: "tok-1", Done: 2, State: engine.OperationDone, At: b.clock.Now()}
	if err := ops.RecordOperationProgress(b.ctx, last); err != nil {
		t.Fatal(err)
	}
	got, _ = ops.Operation(b.ctx, "op-1")
	if got.State != engine.OperationDone || got.Done != 6 || got.Failed != 1 || got.FinishedAt == nil ||
		!got.FinishedAt.Equal(b.clock.Now()) || got.Lease.Token != "" {
		t.Fatalf("finished operation reads %+v", got)
	}
	if err := ops.RecordOperationProgress(b.ctx, last); !errors.Is(err, engine.ErrLeaseLost) {
		t.Fatalf("progress after the end: %v, want ErrLeaseLost", err)
	}
	if v, ok := b.store.(AuditVerifier); ok {
		if rep, err := v.VerifyAudit(b.ctx); err != nil || !rep.OK() || rep.Records != 1 {
			t.Fatalf("journal after an operation started: %+v, %v (want 1 record)", rep, err)
		}
	}
}

// testOperationTakeOver lets a lease lapse: one instance takes the operation over, the old
// holder can no longer write, and a live lease is never taken.
func testOperationTakeOver(t *testing.T, b *bundle) {
	ops := b.operations()
	if err := ops.CreateOperation(b.ctx, b.newOperation("op-2", "tok-a"), engine.AuditEntry{Event: "operation.started"}); err != nil {
		t.Fatal(err)
	}
	now := b.clock.Now()
	if op, err := ops.ClaimLapsedOperation(b.ctx, now, "tok-b", now.Add(time.Minute)); err != nil || op != nil {
		t.Fatalf("a live lease was taken: %+v, %v", op, err)
	}
	now = b.clock.Advance(2 * time.Minute)
	op, err := ops.ClaimLapsedOperation(b.ctx, now, "tok-b", now.Add(time.Minute))
	if err != nil || op == nil || op.ID != "op-2" || op.Lease.Token != "tok-b" {
		t.Fatalf("ClaimLapsedOperation = %+v, %v", op, err)
	}
	if again, err := ops.ClaimLapsedOperation(b.ctx, now, "tok-c", now.Add(time.Minute)); err != nil || again != nil {
		t.Fatalf("a taken operation was taken again: %+v, %v", again, err)
	}
	old := engine.OperationProgress{ID: "op-2", Token: "tok-a", Done: 1, State: engine.OperationRunning, At: now, LeaseUntil: now.Add(time.Minute)}
	if err := ops.RecordOperationProgress(b.ctx, old); !errors.Is(err, engine.ErrLeaseLost) {
		t.Fatalf("the old holder wrote: %v", err)
	}
}

// testMessageJournal reads one message's records oldest first, and none of another's.
func testMessageJournal(t *testing.T, b *bundle) {
	j, ok := b.store.(engine.Journal)
	if !ok {
		t.Skip("the store has no journal reader")
	}
	b.inState("m-j", engine.DispatchFailed)
	b.inState("m-other", engine.DispatchQueued)
	if r := b.apply(engine.ActionRetry, "m-j", ""); r.Err != nil {
		t.Fatal(r.Err)
	}
	recs, err := j.MessageJournal(b.ctx, "m-j", 100)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for i, r := range recs {
		if r.MessageID != "m-j" || (i > 0 && r.At.Before(recs[i-1].At)) {
			t.Fatalf("record %d: %+v", i, r)
		}
		events = append(events, r.Event)
	}
	equalIDs(t, "events", events, []string{"message.accepted", "attempt.finished", "message.retried"})
	if first, _ := j.MessageJournal(b.ctx, "m-j", 1); len(first) != 1 || first[0].Event != "message.accepted" {
		t.Fatalf("limit 1: %+v", first)
	}
	if none, err := j.MessageJournal(b.ctx, "m-absent", 10); err != nil || len(none) != 0 {
		t.Fatalf("unknown message: %+v, %v", none, err)
	}
	if _, err := j.MessageJournal(b.ctx, "m-j", 0); err == nil {
		t.Fatal("limit 0 was accepted")
	}
}
