package engine_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

const day = 24 * time.Hour

func (e *opEnv) retention(batch int) *engine.Retention {
	e.t.Helper()
	r, err := engine.NewRetention(engine.RetentionConfig{Store: e.store, Clock: e.clock, Logger: slog.New(slog.DiscardHandler),
		Policy: engine.RetentionPolicy{PayloadDays: 7, RecordDays: 30, SubmissionReceiptDays: 3}, BatchSize: batch})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// sweepAt sets the clock to at, previews, sweeps, checks that the sweep erased what the
// preview counted, and returns the counts by kind.
func (e *opEnv) sweepAt(r *engine.Retention, at time.Time) map[engine.EraseKind]int64 {
	e.t.Helper()
	e.clock.Set(at)
	preview, err := r.Preview(e.ctx, at)
	if err != nil {
		e.t.Fatal(err)
	}
	done, err := r.Sweep(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	got := map[engine.EraseKind]int64{}
	for i, s := range done.Steps {
		if p := preview.Steps[i]; p.Kind != s.Kind || p.Count != s.Count || !p.Cutoff.Equal(s.Cutoff) {
			e.t.Fatalf("at %s the preview said %+v, the sweep did %+v", at, p, s)
		}
		if s.Count > 0 {
			got[s.Kind] = s.Count
		}
	}
	return got
}

func equalCounts(t *testing.T, when string, got map[engine.EraseKind]int64, want map[engine.EraseKind]int64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: erased %v, want %v", when, got, want)
	}
	for k, n := range want {
		if got[k] != n {
			t.Fatalf("%s: erased %v, want %v", when, got, want)
		}
	}
}

// TestRetentionBoundaries moves the clock to each retention boundary and one millisecond
// before it: receipts go after 3 days, the payload after 7 days of being final, the record
// after 30, and the unknown and queued messages survive every sweep.
func TestRetentionBoundaries(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomeMaybeSent)
	t0 := e.clock.Now()
	held := e.submit("sms-hold", 2) // both become unknown
	e.dispatch()
	op := e.operator(e.store, 0)
	if _, _, err := op.Apply(e.ctx, engine.ActionSettleSent, held[0], "operator-tool"); err != nil {
		t.Fatal(err)
	}
	sent, unknown := held[0], held[1]
	final := *e.message(sent).FinalAt
	queuedAt := e.clock.Now()
	queued := e.submit("sms-hold", 1)[0] // never dispatched: stays queued
	r := e.retention(0)
	records := e.journal()

	equalCounts(t, "before 3 days", e.sweepAt(r, t0.Add(3*day-time.Millisecond)), nil)
	equalCounts(t, "at 3 days", e.sweepAt(r, t0.Add(3*day)), map[engine.EraseKind]int64{engine.EraseSubmissionReceipts: 2})
	equalCounts(t, "3 days after the last acceptance", e.sweepAt(r, queuedAt.Add(3*day)), map[engine.EraseKind]int64{engine.EraseSubmissionReceipts: 1})
	equalCounts(t, "before 7 days final", e.sweepAt(r, final.Add(7*day-time.Millisecond)), nil)
	equalCounts(t, "7 days final", e.sweepAt(r, final.Add(7*day)), map[engine.EraseKind]int64{engine.ErasePayloads: 1})
	if m := e.message(sent); m.PayloadErasedAt == nil || m.Dispatch != engine.DispatchSubmitted {
		t.Fatalf("after the payload window: %+v", m)
	}
	equalCounts(t, "before 30 days final", e.sweepAt(r, final.Add(30*day-time.Millisecond)), nil)
	equalCounts(t, "30 days final", e.sweepAt(r, final.Add(30*day)), map[engine.EraseKind]int64{engine.EraseRecords: 1})
	if _, err := e.store.Message(e.ctx, sent); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("the record outlived its window: %v", err)
	}
	equalCounts(t, "1000 days on", e.sweepAt(r, final.Add(1000*day)), nil)
	for _, id := range []string{unknown, queued} {
		if m := e.message(id); m.PayloadErasedAt != nil || (m.Dispatch != engine.DispatchUnknown && m.Dispatch != engine.DispatchQueued) {
			t.Fatalf("%s after every sweep: %+v", id, m)
		}
	}
	// One journal record per batch that erased something: 2 receipt batches, 1 payload, 1 record.
	if got := e.journal(); got != records+4 {
		t.Fatalf("the sweeps made %d journal records, want 4", got-records)
	}
	// The unknown message can still be settled and sent: its payload is whole.
	if _, _, err := op.Apply(e.ctx, engine.ActionSettleNotSent, unknown, "operator-tool"); err != nil {
		t.Fatalf("settle after 1000 days of sweeps: %v", err)
	}
}

func TestRetentionBatchesAndRefusals(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomeAccepted)
	ids := e.submit("sms", 5)
	op := e.operator(e.store, 0)
	for _, id := range ids {
		if _, _, err := op.Apply(e.ctx, engine.ActionCancel, id, "operator-tool"); err != nil {
			t.Fatal(err)
		}
	}
	r := e.retention(2)
	e.clock.Advance(8 * day)
	var batches []int
	rep, err := r.Erase(e.ctx, e.clock.Now(), func(k engine.EraseKind, n int) {
		if k == engine.ErasePayloads {
			batches = append(batches, n)
		}
	})
	if err != nil || len(batches) != 3 || batches[0] != 2 || batches[1] != 2 || batches[2] != 1 {
		t.Fatalf("payload batches %v, %v; want 2 2 1", batches, err)
	}
	if rep.Steps[0].Kind != engine.ErasePayloads || rep.Steps[0].Count != 5 || rep.Steps[0].Batches != 3 {
		t.Fatalf("report %+v", rep.Steps[0])
	}
	future := e.clock.Now().Add(time.Millisecond)
	if _, err := r.Erase(e.ctx, future, nil); engine.CodeOf(err) != engine.CodeRequestInvalid {
		t.Fatalf("a future cutoff: %v", err)
	}
	if _, err := r.Preview(e.ctx, future); engine.CodeOf(err) != engine.CodeRequestInvalid {
		t.Fatalf("a future cutoff in preview: %v", err)
	}
	for _, p := range []engine.RetentionPolicy{{PayloadDays: 10, RecordDays: 5, SubmissionReceiptDays: 1}, {PayloadDays: 0, RecordDays: 5, SubmissionReceiptDays: 1}} {
		if _, err := engine.NewRetention(engine.RetentionConfig{Store: e.store, Clock: e.clock, Policy: p}); err == nil {
			t.Fatalf("policy %+v accepted", p)
		}
	}
	if _, err := engine.NewRetention(engine.RetentionConfig{Store: e.store, Clock: e.clock,
		Policy: engine.RetentionPolicy{PayloadDays: 1, RecordDays: 1, SubmissionReceiptDays: 1}, BatchSize: engine.MaxEraseBatch + 1}); err == nil {
		t.Fatal("a batch over MaxEraseBatch was accepted")
	}
}

// TestRetentionRunSweepsAtOnceAndStops runs the hourly loop: it sweeps when it starts, tells
// Swept once the sweep is through, and returns when its context ends.
func TestRetentionRunSweepsAtOnceAndStops(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomeAccepted)
	id := e.submit("sms", 1)[0]
	e.dispatch()
	e.clock.Advance(8 * day)
	erased := make(chan engine.EraseKind, 10)
	swept := make(chan engine.RetentionReport, 1)
	r, err := engine.NewRetention(engine.RetentionConfig{Store: e.store, Clock: e.clock,
		Policy:  engine.RetentionPolicy{PayloadDays: 7, RecordDays: 30, SubmissionReceiptDays: 7},
		Observe: func(k engine.EraseKind, _ int) { erased <- k },
		Swept:   func(rep engine.RetentionReport) { swept <- rep }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	rep := <-swept // told once the whole first sweep is through
	cancel()
	<-done
	if len(rep.Steps) != len(engine.EraseKinds()) || rep.Total() != 2 {
		t.Fatalf("the first sweep's report: %+v", rep)
	}
	got := map[engine.EraseKind]bool{}
	for len(erased) > 0 {
		got[<-erased] = true
	}
	if !got[engine.ErasePayloads] || !got[engine.EraseSubmissionReceipts] {
		t.Fatalf("the first sweep erased %v", got)
	}
	if m := e.message(id); m.PayloadErasedAt == nil {
		t.Fatal("the payload was not erased")
	}
}

// busyStore is a shared store on which another instance holds the retention lock.
type busyStore struct {
	*store.Store
	held     bool
	released int
}

func (b *busyStore) LockSweep(context.Context) (func(), bool, error) {
	if b.held {
		return nil, false, nil
	}
	return func() { b.released++ }, true, nil
}

// TestRetentionSkipsWhileAnotherInstanceSweeps: with the store's retention lock held elsewhere
// a sweep erases nothing and says so; once free, the sweep takes the lock and releases it.
func TestRetentionSkipsWhileAnotherInstanceSweeps(t *testing.T) {
	e := newOpEnv(t, engine.OutcomeAccepted)
	start := e.clock.Now()
	id := e.submit("sms", 1)[0]
	e.dispatch()
	if got := e.message(id).Dispatch; got != engine.DispatchSubmitted {
		t.Fatalf("message is %s, want submitted", got)
	}
	shared := &busyStore{Store: e.store, held: true}
	r, err := engine.NewRetention(engine.RetentionConfig{Store: shared, Clock: e.clock,
		Policy: engine.RetentionPolicy{PayloadDays: 7, RecordDays: 30, SubmissionReceiptDays: 3}})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Set(start.Add(40 * day))
	if rep, err := r.Sweep(e.ctx); !errors.Is(err, engine.ErrSweepBusy) || rep.Total() != 0 {
		t.Fatalf("Sweep while busy = %+v, %v; want nothing and ErrSweepBusy", rep, err)
	}
	if _, err := e.store.Message(e.ctx, id); err != nil {
		t.Fatalf("the message is gone after a skipped sweep: %v", err)
	}
	shared.held = false
	if rep, err := r.Sweep(e.ctx); err != nil || rep.Total() == 0 || shared.released != 1 {
		t.Fatalf("Sweep when free = %+v, %v, released %d times; want erasures and one release", rep, err, shared.released)
	}
}

// scrubCounter is the real store, with Scrub counted and failing the first fails times.
type scrubCounter struct {
	*store.Store
	calls, fails int
}

func (s *scrubCounter) Scrub(ctx context.Context) error {
	s.calls++
	if s.fails > 0 {
		s.fails--
		return errors.New("the write-ahead log is busy")
	}
	return s.Store.Scrub(ctx)
}

// TestRetentionScrubsAfterErasing: a run that erased something asks the store to clear the
// erased bytes from its files; one that erased nothing does not, unless the last scrub failed.
func TestRetentionScrubsAfterErasing(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomeAccepted)
	ids := e.submit("sms", 2)
	op := e.operator(e.store, 0)
	for _, id := range ids {
		if _, _, err := op.Apply(e.ctx, engine.ActionCancel, id, "operator-tool"); err != nil {
			t.Fatal(err)
		}
	}
	sc := &scrubCounter{Store: e.store, fails: 1}
	r, err := engine.NewRetention(engine.RetentionConfig{Store: sc, Clock: e.clock,
		Policy: engine.RetentionPolicy{PayloadDays: 7, RecordDays: 30, SubmissionReceiptDays: 3}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Erase(e.ctx, e.clock.Now(), nil); err != nil || sc.calls != 0 {
		t.Fatalf("a run that erased nothing: %v, %d scrubs", err, sc.calls)
	}
	e.clock.Advance(8 * day)
	rep, err := r.Erase(e.ctx, e.clock.Now(), nil)
	if rep.Total() == 0 || sc.calls != 1 || err == nil || !strings.Contains(err.Error(), "clear the erased bytes") {
		t.Fatalf("a run that erased %d: %d scrubs, error %v; want one failed scrub reported", rep.Total(), sc.calls, err)
	}
	if _, err := r.Erase(e.ctx, e.clock.Now(), nil); err != nil || sc.calls != 2 {
		t.Fatalf("the run after a failed scrub: %v, %d scrubs; want the scrub owed", err, sc.calls)
	}
	if _, err := r.Erase(e.ctx, e.clock.Now(), nil); err != nil || sc.calls != 2 {
		t.Fatalf("a run with nothing to erase or owe: %v, %d scrubs", err, sc.calls)
	}
}
