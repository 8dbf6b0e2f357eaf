package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

// StatsForer is implemented by stores that read queue figures for any page byte budget.
type StatsForer interface {
	StatsFor(ctx context.Context, now time.Time, maxBytes int64) (engine.Stats, error)
}

// InFlightCounter is implemented by stores that count the queued and sending messages alone.
type InFlightCounter interface {
	InFlight(ctx context.Context) (queued, sending int64, err error)
}

// AuditVerifier is implemented by stores whose audit journal can be verified.
type AuditVerifier interface {
	VerifyAudit(ctx context.Context) (store.AuditReport, error)
}

func statsTests() []namedTest {
	return []namedTest{
		{"Figures", testStats},
		{"ClosedStoreRefuses", testClosed},
	}
}

func auditTests() []namedTest {
	return []namedTest{
		{"ChainIntactAfterManyWrites", testAuditIntact},
	}
}

func testStats(t *testing.T, b *bundle) {
	b.accept("m-s")
	b.accept("m-sub")
	b.clock.Advance(time.Second)
	p := b.claim(2, 1<<20)
	equalIDs(t, "claimed", claimIDs(p), []string{"m-s", "m-sub"})
	b.mustFinish(p.Claims[1], engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportNone, "ref")
	b.accept("m-q1")
	b.accept("m-q2", withNextAttempt(Epoch().Add(time.Hour)))
	b.accept("m-c")
	b.mustCancel("m-c")
	now := b.clock.Advance(10 * time.Second) // m-q1 has been due for 10 s
	st, err := b.store.Stats(b.ctx, now)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	size := func(id string) int64 { return b.message(id).PayloadBytes }
	want := engine.Stats{
		QueuedEntries: 2, QueuedBytes: size("m-q1") + size("m-q2"),
		ClaimedEntries: 1, ClaimedBytes: size("m-s"), OldestDueAge: 10 * time.Second,
	}
	if st.QueuedEntries != want.QueuedEntries || st.QueuedBytes != want.QueuedBytes ||
		st.ClaimedEntries != want.ClaimedEntries || st.ClaimedBytes != want.ClaimedBytes ||
		st.OldestDueAge != want.OldestDueAge || st.OversizedDueEntries != 0 {
		t.Fatalf("Stats = %+v, want %+v", st, want)
	}
	for d, n := range map[engine.Dispatch]int64{
		engine.DispatchQueued: 2, engine.DispatchSending: 1, engine.DispatchSubmitted: 1,
		engine.DispatchCancelled: 1, engine.DispatchFailed: 0, engine.DispatchExpired: 0, engine.DispatchUnknown: 0,
	} {
		if st.Dispatch[d] != n {
			t.Fatalf("Stats.Dispatch[%s] = %d, want %d (all: %v)", d, st.Dispatch[d], n, st.Dispatch)
		}
	}
	if ic, ok := b.store.(InFlightCounter); ok {
		// The same queued and sending counts, from the queue's indexes.
		queued, sending, err := ic.InFlight(b.ctx)
		if err != nil || queued != 2 || sending != 1 {
			t.Fatalf("InFlight = %d queued, %d sending, %v; want 2 and 1", queued, sending, err)
		}
	}
	sf, ok := b.store.(StatsForer)
	if !ok {
		return
	}
	// With a budget below m-q1's size, m-q1 is oversized; m-q2 is as large but not due.
	st, err = sf.StatsFor(b.ctx, now, size("m-q1")-1)
	if err != nil || st.OversizedDueEntries != 1 {
		t.Fatalf("StatsFor(small budget) = %+v, %v; want 1 oversized", st, err)
	}
}

func testClosed(t *testing.T, b *bundle) {
	b.accept("m-1")
	if err := b.store.Ready(b.ctx); err != nil {
		t.Fatalf("Ready: %v", err)
	}
	if err := b.store.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	res := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance("m-2")})
	wantErr(t, "Accept after Close", res[0].Err, engine.ErrStoreClosed)
	_, err := b.store.ClaimPage(b.ctx, b.clock.Now(), engine.PageLimits{MaxEntries: 1, MaxBytes: 1 << 20}, time.Minute)
	wantErr(t, "ClaimPage after Close", err, engine.ErrStoreClosed)
	if err := b.store.Ready(b.ctx); err == nil {
		t.Fatal("Ready after Close: no error")
	}
}

// testAuditIntact makes every kind of audited change, with refusals and rollbacks among them,
// and checks that the journal holds one verified record per change.
func testAuditIntact(t *testing.T, b *bundle) {
	v, ok := b.store.(AuditVerifier)
	if !ok {
		t.Skip("the store does not verify its audit journal")
	}
	const writers, each = 10, 12
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("m-%d-%d", w, i)
				batch := []engine.Acceptance{
					b.acceptance(id, withQuota("p", writers*each/2)),
					b.acceptance(id+"-reused", withKey("key-"+id, "another body"), withQuota("p", writers*each/2)),
				}
				res := b.store.Accept(b.ctx, batch)
				mu.Lock()
				if res[1].Err == nil {
					t.Errorf("%s: a second message under a spent key or over the quota", id)
				}
				if res[0].Err == nil {
					accepted++
				} else if !errors.Is(res[0].Err, engine.ErrQuotaExceeded) {
					t.Error(res[0].Err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if accepted != writers*each/2 {
		t.Fatalf("%d accepted, want the quota of %d", accepted, writers*each/2)
	}
	changes := accepted
	b.clock.Advance(time.Second)
	p := b.claim(20, 1<<30)
	for i, c := range p.Claims {
		switch i % 3 {
		case 0:
			b.mustFinish(c, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportNone, fmt.Sprintf("ref-%d", i))
			if tally := b.receipts("sms-gateway", engine.Receipt{ProviderReference: fmt.Sprintf("ref-%d", i), Report: engine.ReportDelivered}); tally.Applied != 1 {
				t.Fatalf("receipt: %+v", tally)
			}
			changes += 2
		default:
			b.mustFinish(c, engine.AttemptTransient, engine.DispatchQueued, engine.ReportNone, "")
			changes++
		}
		// A fenced Finish writes nothing.
		wantErr(t, "stale Finish", b.finish(c, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportNone, ""), engine.ErrLeaseLost)
	}
	b.mustCancel(p.Claims[1].Message.ID)
	changes++
	b.clock.Advance(48 * time.Hour)
	n, err := b.store.ExpireDue(b.ctx, b.clock.Now(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	changes += n
	rep, err := v.VerifyAudit(b.ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("VerifyAudit = %+v, %v", rep, err)
	}
	if rep.Records != int64(changes) {
		t.Fatalf("journal holds %d records, want one per change: %d", rep.Records, changes)
	}
}
