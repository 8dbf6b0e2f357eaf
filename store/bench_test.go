package store_test

import (
	"context"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"switchboard/engine"
	"switchboard/engine/cputime"
	"switchboard/store"
	"switchboard/store/pgtest"
)

// Run with:
//
//	go test -run '^$' -bench . -benchtime 20000x -count 3 ./store/
//
// On a shared machine, cpu-µs per operation (the process's CPU time over the timed part)
// moves less than the rate does.

// benchEngines runs bench on SQLite and, when SWITCHBOARD_TEST_POSTGRES_URL is set, on
// PostgreSQL, as sub-benchmarks named by the driver.
func benchEngines(b *testing.B, bench func(b *testing.B, s *store.Store)) {
	for _, driver := range []string{"sqlite", "postgres"} {
		b.Run(driver, func(b *testing.B) { bench(b, benchStore(b, driver)) })
	}
}

// benchStore opens a store: SQLite on a real file with synchronous=NORMAL, or PostgreSQL in a
// schema of its own (skipping without a server).
func benchStore(b *testing.B, driver string) *store.Store {
	b.Helper()
	cfg := store.Config{Driver: driver, AuditKey: testKey, Migrate: true}
	if driver == "postgres" {
		cfg.URL = pgtest.Schema(b)
	} else {
		cfg.Path, cfg.Synchronous = filepath.Join(b.TempDir(), "bench.db"), "NORMAL"
	}
	s, err := store.Open(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	return s
}

// benchAcceptance is a realistic acceptance: a UUIDv7 id, a 202 body, a ~300-byte payload.
func benchAcceptance(b *testing.B, now time.Time) engine.Acceptance {
	id, err := uuid.NewV7()
	if err != nil {
		b.Fatal(err)
	}
	a := acceptance(id.String(), now)
	a.Idempotency.Key = "key-" + id.String()
	a.Idempotency.Response = []byte(`{"id":"` + id.String() + `","status":"queued","links":{"self":"/v1/messages/` + id.String() + `"}}`)
	a.Payload.Parts = map[string]string{"text": strings.Repeat("Your appointment is confirmed. ", 9)} // 279 bytes
	a.Message.Caller = "caller-5d2c9e"
	a.Message.AccessProfile = "case-notices"
	a.DailyLimit = 1 << 30
	return a
}

// BenchmarkAccept measures acceptances per second with 32 concurrent callers, each accepting
// one message at a time, as HTTP handlers do.
func BenchmarkAccept(b *testing.B) { benchEngines(b, benchAccept) }

func benchAccept(b *testing.B, s *store.Store) {
	now := time.Now().UTC()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((32 + procs - 1) / procs)
	cpu := cpuTime(b)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a := benchAcceptance(b, now)
			if r := s.Accept(context.Background(), []engine.Acceptance{a})[0]; r.Err != nil {
				b.Error(r.Err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "accepts/s")
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/accept")
	if ws := s.WriterStats(); ws.Batches > 0 {
		b.ReportMetric(float64(ws.Requests)/float64(ws.Batches), "requests/batch")
	}
}

// BenchmarkClaimFinish measures messages per second through ClaimPage (pages of 100) and
// Finish, with 8 workers finishing each page's claims concurrently.
func BenchmarkClaimFinish(b *testing.B) { benchEngines(b, benchClaimFinish) }

func benchClaimFinish(b *testing.B, s *store.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	for left := b.N; left > 0; {
		batch := make([]engine.Acceptance, min(left, 500))
		for i := range batch {
			batch[i] = benchAcceptance(b, now)
		}
		for _, r := range s.Accept(ctx, batch) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		left -= len(batch)
	}
	limits := engine.PageLimits{MaxEntries: 100, MaxBytes: 10 << 20}
	claims := make(chan engine.Claim)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for c := range claims {
				err := s.Finish(ctx, engine.Finish{
					Lease: c.Lease, Attempt: engine.AttemptAccepted, ProviderRef: "ref-" + c.Message.ID,
					Dispatch: engine.DispatchSubmitted, Report: engine.ReportNone, Provider: c.Message.Provider,
					ProviderAttempts: 1, FinishedAt: now,
					Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", Outcome: "accepted->submitted"},
				})
				if err != nil {
					b.Error(err)
				}
			}
		})
	}
	cpu := cpuTime(b)
	b.ResetTimer()
	done := 0
	for done < b.N {
		p, err := s.ClaimPage(ctx, now, limits, time.Minute)
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Claims) == 0 {
			b.Fatalf("queue empty after %d of %d", done, b.N)
		}
		for _, c := range p.Claims {
			claims <- c
		}
		done += len(p.Claims)
	}
	close(claims)
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "messages/s")
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/message")
}

// cpuTime is the CPU time (user and system) the process has used: on a shared machine it
// says more than wall time about what one operation costs.
func cpuTime(b *testing.B) time.Duration {
	d, ok := cputime.Process()
	if !ok {
		b.Fatal("the process's CPU time cannot be read here")
	}
	return d
}

// BenchmarkReadMessage measures Message (GET /v1/messages/{id}: the message and its attempts,
// from one snapshot) with 8 concurrent readers over 1,000 finished messages.
func BenchmarkReadMessage(b *testing.B) { benchEngines(b, benchReadMessage) }

func benchReadMessage(b *testing.B, s *store.Store) {
	ctx := context.Background()
	now := time.Now().UTC()
	batch := make([]engine.Acceptance, 1000)
	ids := make([]string, len(batch))
	for i := range batch {
		batch[i] = benchAcceptance(b, now)
		ids[i] = batch[i].Message.ID
	}
	for _, r := range s.Accept(ctx, batch) {
		if r.Err != nil {
			b.Fatal(r.Err)
		}
	}
	var next sync.Mutex
	k := 0
	cpu := cpuTime(b)
	b.ResetTimer()
	b.SetParallelism(4)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			next.Lock()
			id := ids[k%len(ids)]
			k++
			next.Unlock()
			if _, err := s.Message(ctx, id); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64((cpuTime(b)-cpu).Microseconds())/float64(b.N), "cpu-µs/read")
}
