package store

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/store/pgtest"
)

// pipelineFixture is a PostgreSQL store with claimed messages, one of them "blocker", whose
// finish the first batch takes while the others queue behind it.
type pipelineFixture struct {
	t      *testing.T
	s      *Store
	url    string
	now    time.Time
	claims map[string]engine.Claim
}

// newPipelineFixture accepts and claims the messages ids ("blocker" first).
func newPipelineFixture(t *testing.T, ids ...string) *pipelineFixture {
	t.Helper()
	url := pgtest.Schema(t)
	t.Parallel()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := Open(context.Background(), Config{Driver: "postgres", URL: url, AuditKey: internalKey,
		Clock: enginetest.NewFakeClock(now), Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := context.Background()
	for _, id := range ids {
		a := engine.Acceptance{
			Message: engine.Message{ID: id, AcceptedAt: now, ExpiresAt: now.Add(time.Hour), NextAttemptAt: now},
			Audit:   engine.AuditEntry{Event: "message.accepted"},
		}
		if r := s.Accept(ctx, []engine.Acceptance{a})[0]; r.Err != nil {
			t.Fatalf("Accept(%s): %v", id, r.Err)
		}
	}
	page, err := s.ClaimPage(ctx, now, engine.PageLimits{MaxEntries: 100, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(page.Claims) != len(ids) {
		t.Fatalf("ClaimPage = %d claims, %v; want %d", len(page.Claims), err, len(ids))
	}
	f := &pipelineFixture{t: t, s: s, url: url, now: now, claims: map[string]engine.Claim{}}
	for _, c := range page.Claims {
		f.claims[c.Message.ID] = c
	}
	return f
}

// finish is an accepted attempt's finish of the message id, with provider "gw".
func (f *pipelineFixture) finish(id string) engine.Finish {
	c := f.claims[id]
	return engine.Finish{Lease: c.Lease, Attempt: engine.AttemptAccepted, Dispatch: engine.DispatchSubmitted,
		Report: engine.ReportNone, Provider: "gw", ProviderRef: "ref-" + id, ProviderAttempts: 1, FinishedAt: f.now,
		Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: id, At: f.now}}
}

// finishBehindBlocker holds the blocker's row, so that the writer's batch with the blocker's
// finish waits while the other finishes queue up behind it, then lets it go: the others are
// one batch. It returns each finish's error.
func (f *pipelineFixture) finishBehindBlocker(finishes map[string]engine.Finish) map[string]error {
	t, s, ctx := f.t, f.s, context.Background()
	t.Helper()
	raw, err := sqlx.Open("pgx", f.url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	lock, err := raw.Beginx()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(`SELECT id FROM messages WHERE id = 'blocker' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	results := make(map[string]error)
	var mu sync.Mutex
	var wg sync.WaitGroup
	submit := func(id string) {
		wg.Go(func() {
			err := s.Finish(ctx, finishes[id])
			mu.Lock()
			results[id] = err
			mu.Unlock()
		})
	}
	before := s.WriterStats()
	submit("blocker")
	waitUntil(t, "the writer to take the blocker's finish", func() bool { return s.handled.Load() > before.Requests })
	for id := range finishes {
		if id != "blocker" {
			submit(id)
		}
	}
	waitUntil(t, "the finishes queued", func() bool { return len(s.requests) >= len(finishes)-1 })
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if st := s.WriterStats(); st.Batches-before.Batches != 2 {
		t.Fatalf("%d batches for the finishes, want 2: the blocker's, and one for those queued behind it", st.Batches-before.Batches)
	}
	return results
}

// verifyAudit fails the test unless the audit chain verifies.
func (f *pipelineFixture) verifyAudit() {
	f.t.Helper()
	rep, err := f.s.VerifyAudit(context.Background())
	if err != nil || !rep.OK() || rep.Records == 0 {
		f.t.Fatalf("VerifyAudit = %+v, %v", rep, err)
	}
}

// TestPipelinedFinishesWithALostLease puts three finishes in one PostgreSQL batch, the middle
// one with a lease that is not the message's: they go out as one multi-row statement, the
// stale one closes nothing, and the batch runs again one statement at a time. The two others
// commit, the stale one is refused with ErrLeaseLost and changes nothing, and the audit chain
// verifies.
func TestPipelinedFinishesWithALostLease(t *testing.T) {
	f := newPipelineFixture(t, "blocker", "a", "stale", "c")
	ctx := context.Background()
	finishes := map[string]engine.Finish{}
	for id := range f.claims {
		fin := f.finish(id)
		if id == "stale" {
			fin.Lease.Token = "not-the-lease"
		}
		finishes[id] = fin
	}
	before := f.s.WriterStats()
	results := f.finishBehindBlocker(finishes)
	for _, id := range []string{"blocker", "a", "c"} {
		if results[id] != nil {
			t.Fatalf("Finish(%s) = %v, want nil", id, results[id])
		}
		if m, err := f.s.Message(ctx, id); err != nil || m.Dispatch != engine.DispatchSubmitted {
			t.Fatalf("Message(%s) = %+v, %v; want submitted", id, m, err)
		}
	}
	if !errors.Is(results["stale"], engine.ErrLeaseLost) {
		t.Fatalf("Finish(stale) = %v, want ErrLeaseLost", results["stale"])
	}
	if m, err := f.s.Message(ctx, "stale"); err != nil || m.Dispatch != engine.DispatchSending {
		t.Fatalf("Message(stale) = %+v, %v; want still sending", m, err)
	}
	st := f.s.WriterStats()
	if st.Reruns-before.Reruns != 1 {
		t.Fatalf("%d batches run again, want 1: the pipeline of the three queued finishes, which did not hold", st.Reruns-before.Reruns)
	}
	if st.Merged-before.Merged != 3 {
		t.Fatalf("%d finishes ran as rows of a multi-row statement, want 3: the three queued behind the blocker", st.Merged-before.Merged)
	}
	f.verifyAudit()
}
