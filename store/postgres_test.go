package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/store"
	"switchboard/store/pgtest"
	"switchboard/store/storetest"
)

// openPostgres opens (and migrates) a store on url, closed when the test ends.
func openPostgres(t *testing.T, url string, clock engine.Clock) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), store.Config{Driver: "postgres", URL: url, AuditKey: testKey, Clock: clock, Migrate: true})
	if err != nil {
		t.Fatalf("Open(postgres): %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestPostgres runs the conformance suite on PostgreSQL, each test in a schema of its own.
func TestPostgres(t *testing.T) {
	pgtest.Schema(t) // skips without a server
	t.Parallel()
	storetest.Exercise(t, func(t *testing.T, clock engine.Clock) engine.Store {
		return openPostgres(t, pgtest.Schema(t), clock)
	})
}

// TestPostgresEvents runs the outbox's conformance suite on PostgreSQL.
func TestPostgresEvents(t *testing.T) {
	pgtest.Schema(t) // skips without a server
	t.Parallel()
	storetest.ExerciseEvents(t, func(t *testing.T, clock engine.Clock, subs []engine.Subscription) engine.Store {
		s, err := store.Open(context.Background(), store.Config{Driver: "postgres", URL: pgtest.Schema(t),
			AuditKey: testKey, Clock: clock, Migrate: true, Subscriptions: subs})
		if err != nil {
			t.Fatalf("Open(postgres): %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// instances opens n stores on one fresh schema, as n serve processes would, migrating at once.
func instances(t *testing.T, n int, clock engine.Clock) []*store.Store {
	t.Helper()
	url := pgtest.Schema(t)
	out := make([]*store.Store, n)
	errs := make(chan error, n)
	for i := range out {
		go func() {
			s, err := store.Open(context.Background(), store.Config{Driver: "postgres", URL: url, AuditKey: testKey, Clock: clock, Migrate: true})
			if err == nil {
				out[i] = s
				t.Cleanup(func() { _ = s.Close() })
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("Open instance: %v", err)
		}
	}
	return out
}

// TestPostgresInstancesShareTheQueue claims from three instances at once until the queue is
// empty: every message is claimed exactly once, and no instance waits for another's page.
func TestPostgresInstancesShareTheQueue(t *testing.T) {
	pgtest.Schema(t)
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	clock := enginetest.NewFakeClock(now)
	st := instances(t, 3, clock)
	const total = 600
	batch := make([]engine.Acceptance, 0, 50)
	for i := range total {
		batch = append(batch, acceptance(fmt.Sprintf("m%04d", i), now))
		if len(batch) == cap(batch) {
			for _, r := range st[i%3].Accept(context.Background(), batch) {
				if r.Err != nil {
					t.Fatalf("Accept: %v", r.Err)
				}
			}
			batch = batch[:0]
		}
	}
	var mu sync.Mutex
	claimed := map[string]int{}
	var wg sync.WaitGroup
	for _, s := range st {
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					page, err := s.ClaimPage(context.Background(), now, engine.PageLimits{MaxEntries: 7, MaxBytes: 1 << 20}, time.Minute)
					if err != nil {
						t.Errorf("ClaimPage: %v", err)
						return
					}
					if len(page.Claims) == 0 {
						return
					}
					mu.Lock()
					for _, c := range page.Claims {
						claimed[c.Message.ID]++
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	if len(claimed) != total {
		t.Fatalf("claimed %d distinct messages, want %d", len(claimed), total)
	}
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("message %s claimed %d times", id, n)
		}
	}
}

// TestPostgresDailyLimitAcrossInstances accepts from two instances at once under one access
// profile's daily limit: exactly the limit is accepted in all.
func TestPostgresDailyLimitAcrossInstances(t *testing.T) {
	pgtest.Schema(t)
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	st := instances(t, 2, enginetest.NewFakeClock(now))
	const limit, each = 40, 60
	var accepted, refused atomic.Int64
	var wg sync.WaitGroup
	for i, s := range st {
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := range each / 4 {
					a := acceptance(fmt.Sprintf("i%d-g%d-%d", i, g, j), now)
					a.DailyLimit = limit
					switch r := s.Accept(context.Background(), []engine.Acceptance{a})[0]; {
					case r.Err == nil:
						accepted.Add(1)
					case errors.Is(r.Err, engine.ErrQuotaExceeded):
						refused.Add(1)
					default:
						t.Errorf("Accept: %v", r.Err)
					}
				}
			}()
		}
	}
	wg.Wait()
	if accepted.Load() != limit || refused.Load() != 2*each-limit {
		t.Fatalf("accepted %d, refused %d; want %d and %d", accepted.Load(), refused.Load(), limit, 2*each-limit)
	}
}

// TestPostgresOneKeyAcrossInstances submits one idempotency key to two instances at once: one
// message, and both callers get its answer.
func TestPostgresOneKeyAcrossInstances(t *testing.T) {
	pgtest.Schema(t)
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	st := instances(t, 2, enginetest.NewFakeClock(now))
	for round := range 20 {
		ids := make([]string, 2)
		var wg sync.WaitGroup
		for i, s := range st {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := acceptance(fmt.Sprintf("r%d-i%d", round, i), now)
				a.Idempotency.Key = fmt.Sprint("shared-", round)
				a.Idempotency.RequestHash = []byte("same request")
				a.Idempotency.Response = []byte(`{"id":"` + a.Message.ID + `"}`)
				r := s.Accept(context.Background(), []engine.Acceptance{a})[0]
				if r.Err != nil {
					t.Errorf("Accept: %v", r.Err)
					return
				}
				ids[i] = string(r.Response)
			}()
		}
		wg.Wait()
		if ids[0] != ids[1] {
			t.Fatalf("round %d: the two instances answered %s and %s", round, ids[0], ids[1])
		}
	}
	n, err := st[0].CountMessages(context.Background(), engine.MessageQuery{})
	if err != nil || n != 20 {
		t.Fatalf("CountMessages = %d, %v; want 20", n, err)
	}
}

// TestPostgresAuditChainsPerInstance: each instance writes its own chain, and verifying from
// any instance walks them all.
func TestPostgresAuditChainsPerInstance(t *testing.T) {
	pgtest.Schema(t)
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	st := instances(t, 3, enginetest.NewFakeClock(now))
	for i, s := range st {
		mustAccept(t, s, fmt.Sprint("audit-", i), now)
	}
	rep, err := st[0].VerifyAudit(context.Background())
	if err != nil || !rep.OK() || rep.Writers != 3 || rep.Records != 3 {
		t.Fatalf("VerifyAudit = %+v, %v; want 3 chains of one record, all holding", rep, err)
	}
}

// TestPostgresSweepLock: one retention sweep at a time across the instances of a schema; a
// deployment in another schema of the same database sweeps on its own.
func TestPostgresSweepLock(t *testing.T) {
	pgtest.Schema(t)
	t.Parallel()
	st := instances(t, 2, engine.SystemClock{})
	other := instances(t, 1, engine.SystemClock{})[0]
	ctx := context.Background()
	release, ok, err := st[0].LockSweep(ctx)
	if err != nil || !ok {
		t.Fatalf("first LockSweep = %v, %v", ok, err)
	}
	if _, ok, err := st[1].LockSweep(ctx); err != nil || ok {
		t.Fatalf("LockSweep while another instance sweeps = %v, %v; want false", ok, err)
	}
	releaseOther, ok, err := other.LockSweep(ctx)
	if err != nil || !ok {
		t.Fatalf("LockSweep in another schema while this one sweeps = %v, %v; want true", ok, err)
	}
	releaseOther()
	release()
	release2, ok, err := st[1].LockSweep(ctx)
	if err != nil || !ok {
		t.Fatalf("LockSweep after release = %v, %v", ok, err)
	}
	release2()
}

// TestPostgresInboxAcrossInstances puts entries from two instances at once: a reader paging by
// cursor sees every entry once, in increasing id order.
func TestPostgresInboxAcrossInstances(t *testing.T) {
	pgtest.Schema(t)
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	st := instances(t, 2, enginetest.NewFakeClock(now))
	var wg sync.WaitGroup
	for i, s := range st {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 50 {
				_, err := s.PutInbox(context.Background(), engine.InboxEntry{From: "peer", Protocol: "/p/1",
					MessageID: fmt.Sprintf("i%d-%d", i, j), ReceivedAt: now, Payload: []byte("x"),
					Respond: func(id string) []byte { return []byte(id) }})
				if err != nil {
					t.Errorf("PutInbox: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	seen := map[string]bool{}
	after := ""
	for {
		page, next, err := st[0].ListInbox(context.Background(), after, 7)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, e := range page {
			if e.ID <= after || seen[e.ID] {
				t.Fatalf("entry %s out of order after %s", e.ID, after)
			}
			seen[e.ID] = true
			after = e.ID
		}
		after = next
	}
	if len(seen) != 100 {
		t.Fatalf("listed %d entries, want 100", len(seen))
	}
}

// TestPostgresStrandedReceiptIsApplied: a receipt kept as unmatched although its message holds
// the reference (the state two overlapping transactions leave behind) is applied by
// ReconcileReceipts, once.
func TestPostgresStrandedReceiptIsApplied(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := openPostgres(t, url, enginetest.NewFakeClock(now))
	mustAccept(t, s, "stranded", now)
	page, err := s.ClaimPage(ctx, now, engine.PageLimits{MaxEntries: 1, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(page.Claims) != 1 {
		t.Fatalf("ClaimPage = %+v, %v", page, err)
	}
	c := page.Claims[0]
	if err := s.Finish(ctx, engine.Finish{Lease: c.Lease, Attempt: engine.AttemptAccepted, ProviderRef: "ref-1",
		Dispatch: engine.DispatchSubmitted, Report: engine.ReportNone, Provider: c.Message.Provider,
		ProviderAttempts: 1, FinishedAt: now,
		Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", Outcome: "accepted->submitted"}}); err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`INSERT INTO receipts (provider, provider_ref, report, code, received_at) VALUES ($1, 'ref-1', 'delivered', '', $2)`,
		c.Message.Provider, now.UnixMilli()); err != nil {
		t.Fatal(err)
	}
	if n, err := s.ReconcileReceipts(ctx, now.Add(time.Second), 10); err != nil || n != 1 {
		t.Fatalf("ReconcileReceipts = %d, %v; want 1", n, err)
	}
	m, err := s.Message(ctx, "stranded")
	if err != nil || m.Report != engine.ReportDelivered {
		t.Fatalf("Message = %+v, %v; want report delivered", m, err)
	}
	if n, err := s.ReconcileReceipts(ctx, now.Add(2*time.Second), 10); err != nil || n != 0 {
		t.Fatalf("second ReconcileReceipts = %d, %v; want 0", n, err)
	}
}

// TestPostgresInboxQuotaAcrossInstances: two instances storing one peer's envelopes together
// hold its daily byte quota exactly.
func TestPostgresInboxQuotaAcrossInstances(t *testing.T) {
	pgtest.Schema(t)
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	st := instances(t, 2, enginetest.NewFakeClock(now))
	var stored, refused atomic.Int64
	var wg sync.WaitGroup
	for i, s := range st {
		wg.Go(func() {
			for j := range 40 {
				res, err := s.PutInbox(context.Background(), engine.InboxEntry{From: "peer", Protocol: "/p/1",
					MessageID: fmt.Sprintf("q%d-%d", i, j), ReceivedAt: now, Payload: []byte("xy"), BytesPerDay: 100,
					Respond: func(id string) []byte { return []byte(id) }})
				switch {
				case err != nil:
					t.Errorf("PutInbox: %v", err)
				case res.OverQuota:
					refused.Add(1)
				default:
					stored.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if stored.Load() != 50 || refused.Load() != 30 {
		t.Fatalf("%d stored, %d refused; want 50 and 30", stored.Load(), refused.Load())
	}
}

// TestPostgresSweepVacuumsWhatItErased: a retention run that erased something vacuums the
// erased tables (so their dead row versions become space new rows overwrite); one that
// erased nothing does not.
func TestPostgresSweepVacuumsWhatItErased(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	clock := enginetest.NewFakeClock(storetest.Epoch())
	s := openPostgres(t, url, clock)
	ctx := context.Background()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	vacuumed := func() bool {
		t.Helper()
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_user_tables
			WHERE schemaname = current_schema() AND relname = 'payloads' AND last_vacuum IS NOT NULL`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}
	r, err := engine.NewRetention(engine.RetentionConfig{Store: s, Clock: clock,
		Policy: engine.RetentionPolicy{PayloadDays: 7, RecordDays: 90, SubmissionReceiptDays: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Erase(ctx, clock.Now(), nil); err != nil || vacuumed() {
		t.Fatalf("a run that erased nothing: %v, vacuumed %v", err, vacuumed())
	}
	mustAccept(t, s, "0190f5a0-0000-7000-8000-000000000001", clock.Now())
	c, err := s.ClaimPage(ctx, clock.Now(), engine.PageLimits{MaxEntries: 1, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(c.Claims) != 1 {
		t.Fatalf("claim: %v %v", c, err)
	}
	if err := s.Finish(ctx, engine.Finish{Lease: c.Claims[0].Lease, Attempt: engine.AttemptAccepted, Dispatch: engine.DispatchSubmitted,
		Report: engine.ReportUnavailable, Provider: "gw", ProviderRef: "ref", ProviderAttempts: 1, FinishedAt: clock.Now(),
		Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: c.Claims[0].Message.ID, Outcome: "accepted"}}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(8 * 24 * time.Hour)
	rep, err := r.Erase(ctx, clock.Now(), nil)
	if err != nil || rep.Total() == 0 {
		t.Fatalf("erase: %+v, %v", rep, err)
	}
	if !vacuumed() {
		t.Fatal("the run that erased a payload did not vacuum the payloads table")
	}
}

// TestPostgresInstancesShareEvents delivers one outbox from two instances at once, each changing
// messages while the other claims: every row is claimed by one instance at a time (never by both
// while its lease lives), and each message's latest sequence is delivered.
func TestPostgresInstancesShareEvents(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	clock := enginetest.NewFakeClock(now)
	subs := []engine.Subscription{{Endpoint: "ep", MessageProfiles: []string{"a"}}}
	st := make([]*store.Store, 2)
	for i := range st {
		s, err := store.Open(context.Background(), store.Config{Driver: "postgres", URL: url, AuditKey: testKey,
			Clock: clock, Migrate: true, Subscriptions: subs})
		if err != nil {
			t.Fatalf("Open instance %d: %v", i, err)
		}
		t.Cleanup(func() { _ = s.Close() })
		st[i] = s
	}
	const total = 300
	for i := range total / 50 {
		batch := make([]engine.Acceptance, 0, 50)
		for j := range 50 {
			batch = append(batch, acceptance(fmt.Sprintf("m%04d", i*50+j), now))
		}
		for _, r := range st[i%2].Accept(context.Background(), batch) {
			if r.Err != nil {
				t.Fatalf("Accept: %v", r.Err)
			}
		}
	}
	var mu sync.Mutex
	// holding is one lease the test saw granted; finishing once its FinishEvent was issued.
	type holding struct {
		instance  int
		token     string
		finishing bool
	}
	holder := map[int64]holding{}   // row -> the lease on it now
	delivered := map[string]int64{} // message -> latest sequence delivered
	var changes atomic.Int64        // messages claimed for dispatch (one more change each)
	var wg sync.WaitGroup
	for i, s := range st {
		for range 3 {
			wg.Go(func() {
				for {
					// A change of some messages while events are out: their rows take a new sequence.
					if page, err := s.ClaimPage(context.Background(), now, engine.PageLimits{MaxEntries: 3, MaxBytes: 1 << 20}, time.Minute); err == nil {
						changes.Add(int64(len(page.Claims)))
					}
					cs, err := s.ClaimEvents(context.Background(), "ep", now, 8, time.Minute)
					if err != nil {
						t.Errorf("ClaimEvents: %v", err)
						return
					}
					if len(cs) == 0 {
						return
					}
					mu.Lock()
					for _, c := range cs {
						// A row is due again only once its finish commits (a newer change makes it
						// due at once), which the test sees only after FinishEvent returns: a claim
						// while the finish is out may be a right one. A claim while the lease lives
						// and no finish was issued never is.
						if h, held := holder[c.Lease.ID]; held && !h.finishing {
							t.Errorf("row %d claimed by instance %d while instance %d holds it", c.Lease.ID, i, h.instance)
						}
						holder[c.Lease.ID] = holding{instance: i, token: c.Lease.Token}
					}
					mu.Unlock()
					for _, c := range cs {
						mu.Lock()
						if h := holder[c.Lease.ID]; h.token == c.Lease.Token {
							h.finishing = true
							holder[c.Lease.ID] = h
						}
						mu.Unlock()
						if err := s.FinishEvent(context.Background(), engine.EventOutcome{Lease: c.Lease, Sequence: c.Sequence,
							Delivered: true, Status: 200, At: now}); err != nil {
							t.Errorf("FinishEvent: %v", err)
							return
						}
						mu.Lock()
						if holder[c.Lease.ID].token == c.Lease.Token {
							delete(holder, c.Lease.ID)
						}
						delivered[c.Subject] = max(delivered[c.Subject], c.Sequence)
						mu.Unlock()
					}
				}
			})
		}
	}
	wg.Wait()
	if len(delivered) != total {
		t.Fatalf("delivered events of %d messages, want %d", len(delivered), total)
	}
	for id, seq := range delivered {
		m, err := st[0].Message(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if seq != m.Sequence {
			t.Fatalf("%s: delivered sequence %d, the message is at %d", id, seq, m.Sequence)
		}
	}
	t.Logf("%d messages changed while their events were out", changes.Load())
}

// TestPostgresAcceptancesSkipTheDispatchWriter: with several writers, acceptances never wait in
// the first writer, which claims, finishes and applies receipts; the others take them all.
func TestPostgresAcceptancesSkipTheDispatchWriter(t *testing.T) {
	pgtest.Schema(t)
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Millisecond)
	s := openPostgres(t, pgtest.Schema(t), enginetest.NewFakeClock(now))
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() { mustAccept(t, s, fmt.Sprint("split-", i), now) })
	}
	wg.Wait()
	for i := range 40 {
		recs, err := s.MessageJournal(context.Background(), fmt.Sprint("split-", i), 10)
		if err != nil || len(recs) == 0 {
			t.Fatalf("MessageJournal(split-%d) = %v, %v", i, recs, err)
		}
		if recs[0].Writer == s.WriterID() {
			t.Fatalf("split-%d was accepted by the dispatch writer %s", i, s.WriterID())
		}
	}
}
