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

// TestPipelinedFinishesWithALostLease puts three finishes in one PostgreSQL batch, the middle
// one with a lease that is not the message's: they go out as one pipeline, the stale one closes
// nothing, and the batch runs again one statement at a time. The two others commit, the stale
// one is refused with ErrLeaseLost and changes nothing, and the audit chain verifies.
func TestPipelinedFinishesWithALostLease(t *testing.T) {
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
	ids := []string{"blocker", "a", "stale", "c"}
	for _, id := range ids {
		a := engine.Acceptance{
			Message: engine.Message{ID: id, AcceptedAt: now, ExpiresAt: now.Add(time.Hour), NextAttemptAt: now},
			Audit:   engine.AuditEntry{Event: "message.accepted"},
		}
		if r := s.Accept(ctx, []engine.Acceptance{a})[0]; r.Err != nil {
			t.Fatalf("Accept(%s): %v", id, r.Err)
		}
	}
	page, err := s.ClaimPage(ctx, now, engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(page.Claims) != len(ids) {
		t.Fatalf("ClaimPage = %d claims, %v; want %d", len(page.Claims), err, len(ids))
	}
	finish := func(c engine.Claim) engine.Finish {
		return engine.Finish{Lease: c.Lease, Attempt: engine.AttemptAccepted, Dispatch: engine.DispatchSubmitted,
			Report: engine.ReportNone, ProviderRef: "ref-" + c.Message.ID, ProviderAttempts: 1, FinishedAt: now,
			Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: c.Message.ID, At: now}}
	}
	finishes := map[string]engine.Finish{}
	for _, c := range page.Claims {
		f := finish(c)
		if c.Message.ID == "stale" {
			f.Lease.Token = "not-the-lease"
		}
		finishes[c.Message.ID] = f
	}

	// Hold the blocker's row, so that the dispatch writer's batch with its finish waits while
	// the three others queue up behind it.
	raw, err := sqlx.Open("pgx", url)
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
	for _, id := range ids[1:] {
		submit(id)
	}
	waitUntil(t, "three finishes queued", func() bool { return len(s.requests) >= 3 })
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	for _, id := range []string{"blocker", "a", "c"} {
		if results[id] != nil {
			t.Fatalf("Finish(%s) = %v, want nil", id, results[id])
		}
		if m, err := s.Message(ctx, id); err != nil || m.Dispatch != engine.DispatchSubmitted {
			t.Fatalf("Message(%s) = %+v, %v; want submitted", id, m, err)
		}
	}
	if !errors.Is(results["stale"], engine.ErrLeaseLost) {
		t.Fatalf("Finish(stale) = %v, want ErrLeaseLost", results["stale"])
	}
	if m, err := s.Message(ctx, "stale"); err != nil || m.Dispatch != engine.DispatchSending {
		t.Fatalf("Message(stale) = %+v, %v; want still sending", m, err)
	}
	if st := s.WriterStats(); st.Batches-before.Batches != 2 {
		t.Fatalf("%d batches for the four finishes, want 2: the blocker's, and one for the three queued behind it", st.Batches-before.Batches)
	}
	if st := s.WriterStats(); st.Reruns-before.Reruns != 1 {
		t.Fatalf("%d batches run again, want 1: the pipeline of the three queued finishes, which did not hold", st.Reruns-before.Reruns)
	}
	rep, err := s.VerifyAudit(ctx)
	if err != nil || !rep.OK() || rep.Records == 0 {
		t.Fatalf("VerifyAudit = %+v, %v", rep, err)
	}
}
