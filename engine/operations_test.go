package engine_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

// newOperations returns Operations over the env's store in batches of batch messages.
func (e *opEnv) newOperations(batch int) *engine.Operations {
	e.t.Helper()
	ops, err := engine.NewOperations(engine.OperationsConfig{Operator: e.operator(e.store, batch), Store: e.store,
		Clock: e.clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(ops.Close)
	return ops
}

// awaitOperation polls an operation until it is final; the work runs in the background.
func (e *opEnv) awaitOperation(ops *engine.Operations, id string) *engine.Operation {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		op, err := ops.Get(e.ctx, id)
		if err != nil {
			e.t.Fatal(err)
		}
		if op.State != engine.OperationRunning {
			return op
		}
		time.Sleep(5 * time.Millisecond)
	}
	e.t.Fatalf("operation %s is still running", id)
	return nil
}

// failed brings n messages of profile sms-hold to failed.
func (e *opEnv) failed(n int) []string {
	ids := e.submit("sms-hold", n)
	e.dispatch()
	for _, id := range ids {
		if d := e.message(id).Dispatch; d != engine.DispatchFailed {
			e.t.Fatalf("%s is %s, want failed", id, d)
		}
	}
	return ids
}

// TestOperationsRetryToDone starts a bulk retry and follows it to done: every message changed
// once, in batches, each journaled with the operator, after one record of who started it.
func TestOperationsRetryToDone(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomePermanent)
	ids := e.failed(25)
	before := e.journal()
	ops := e.newOperations(10)
	sel := engine.Selection{Status: "failed", SenderProfile: "sms-hold", Before: e.clock.Now()}
	p, err := ops.Preview(e.ctx, engine.ActionRetry, sel, 5)
	if err != nil || p.Matched != 25 || len(p.Sample) != 5 {
		t.Fatalf("Preview = %+v, %v", p, err)
	}
	if e.journal() != before {
		t.Fatal("a preview wrote to the journal")
	}
	started, err := ops.Start(e.ctx, engine.ActionRetry, sel, "operator:ops")
	if err != nil {
		t.Fatal(err)
	}
	if started.State != engine.OperationRunning || started.Total != 25 {
		t.Fatalf("started %+v", started)
	}
	op := e.awaitOperation(ops, started.ID)
	if op.State != engine.OperationDone || op.Done != 25 || op.Failed != 0 || op.FinishedAt == nil {
		t.Fatalf("finished %+v", op)
	}
	for _, id := range ids {
		if m := e.message(id); m.Dispatch != engine.DispatchQueued || m.Generation != 2 {
			t.Fatalf("%s: %s generation %d", id, m.Dispatch, m.Generation)
		}
	}
	if got := e.journal(); got != before+26 {
		t.Fatalf("journal grew by %d records, want 26 (one start, 25 retries)", got-before)
	}
	var actors []string
	if err := e.store.ExportAudit(e.ctx, time.Time{}, func(r store.AuditRecord) error {
		if r.Event == "operation.started" || r.Event == "message.retried" {
			actors = append(actors, r.Actor)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, a := range actors {
		if a != "operator:ops" {
			t.Fatalf("journal actors %v, want the operator's", actors)
		}
	}
}

// TestOperationsTakeOverLapsedLease plays an instance that died after one batch: another
// takes the operation over once the lease lapsed and goes on after the recorded cursor.
func TestOperationsTakeOverLapsedLease(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomePermanent)
	e.failed(25)
	sel := engine.Selection{Status: "failed", Before: e.clock.Now()}
	now := e.clock.Now()
	dead := engine.Operation{ID: "op-dead", Action: engine.ActionRetry, Selection: sel, Actor: "operator:ops",
		State: engine.OperationRunning, Total: 25, CreatedAt: now, UpdatedAt: now,
		Lease: engine.LeaseRef{Token: "dead-instance", ExpiresAt: now.Add(time.Minute)}}
	if err := e.store.CreateOperation(e.ctx, dead, engine.AuditEntry{Event: "operation.started", Actor: "operator:ops"}); err != nil {
		t.Fatal(err)
	}
	b, err := e.operator(e.store, 10).ApplyBatch(e.ctx, engine.ActionRetry, sel, "", "operator:ops")
	if err != nil || b.Applied != 10 || b.Next == "" {
		t.Fatalf("first batch %+v, %v", b, err)
	}
	if err := e.store.RecordOperationProgress(e.ctx, engine.OperationProgress{ID: "op-dead", Token: "dead-instance",
		Done: b.Applied, Cursor: b.Next, State: engine.OperationRunning, At: now, LeaseUntil: now.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	ops := e.newOperations(10)
	if n, err := ops.RecoverLapsed(e.ctx); err != nil || n != 0 {
		t.Fatalf("took over a live lease: %d, %v", n, err)
	}
	e.clock.Advance(2 * time.Minute)
	if n, err := ops.RecoverLapsed(e.ctx); err != nil || n != 1 {
		t.Fatalf("RecoverLapsed = %d, %v; want 1", n, err)
	}
	op := e.awaitOperation(ops, "op-dead")
	if op.State != engine.OperationDone || op.Done != 25 || op.Failed != 0 {
		t.Fatalf("taken-over operation ended %+v", op)
	}
	if n := e.journal(); n != 25+25+1+25 { // accepted, attempt finished, started, retried
		t.Fatalf("journal holds %d records", n)
	}
}

// TestOperationsRefuseBadSelections: the same refusals as the command line's bulk actions,
// and nothing stored.
func TestOperationsRefuseBadSelections(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomePermanent)
	ops := e.newOperations(10)
	for _, c := range []struct {
		a    engine.Action
		sel  engine.Selection
		code string
	}{
		{engine.ActionRetry, engine.Selection{Status: "queued", Before: e.clock.Now()}, engine.CodeMessageNotEligible},
		{engine.ActionSettleSent, engine.Selection{Status: "unknown"}, engine.CodeRequestInvalid},
		{engine.ActionCancel, engine.Selection{Status: "lost", Before: e.clock.Now()}, engine.CodeRequestInvalid},
	} {
		_, err := ops.Start(e.ctx, c.a, c.sel, "operator:ops")
		var p *engine.Problem
		if !errors.As(err, &p) || p.Code != c.code {
			t.Fatalf("Start(%s, %+v) = %v, want %s", c.a, c.sel, err, c.code)
		}
	}
	if n := e.journal(); n != 0 {
		t.Fatalf("refused operations wrote %d journal records", n)
	}
}
