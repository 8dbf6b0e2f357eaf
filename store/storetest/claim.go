package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
)

func claimTests() []namedTest {
	return []namedTest{
		{"Order", testClaimOrder},
		{"PageOfEntries", testClaimEntries},
		{"ClaimedState", testClaimState},
		{"CutByBytes", testClaimByteCut},
		{"OversizedSkipped", testClaimOversized},
		{"NotBeforeAndRetryTime", testClaimNotDue},
		{"ExpiredNeverClaimed", testClaimExpired},
		{"ConcurrentClaimsDisjoint", testClaimConcurrent},
		{"InvalidLimits", testClaimInvalid},
	}
}

func testClaimOrder(t *testing.T, b *bundle) {
	t0 := Epoch()
	// Accepted in an order that is none of the claim orders: next attempt time first, then
	// acceptance time, then id.
	b.accept("m-e", withAcceptedAt(t0.Add(2*time.Second)))
	b.accept("m-d", withAcceptedAt(t0.Add(time.Second)), withNextAttempt(t0.Add(time.Second)))
	b.accept("m-c", withAcceptedAt(t0), withNextAttempt(t0.Add(time.Second)))
	b.accept("m-b", withAcceptedAt(t0), withNextAttempt(t0.Add(time.Second)))
	b.accept("m-a", withAcceptedAt(t0.Add(3*time.Second)), withNextAttempt(t0))
	b.clock.Set(t0.Add(time.Minute))
	p := b.claim(100, 1<<30)
	equalIDs(t, "claim order", claimIDs(p), []string{"m-a", "m-b", "m-c", "m-d", "m-e"})
	if p.ByteBudgetCut || p.OversizedDue != 0 {
		t.Fatalf("page = cut %v, oversized %d; want neither", p.ByteBudgetCut, p.OversizedDue)
	}
}

func testClaimEntries(t *testing.T, b *bundle) {
	for i := range 5 {
		b.accept(fmt.Sprintf("m-%d", i), withAcceptedAt(Epoch().Add(time.Duration(i)*time.Millisecond)))
	}
	b.clock.Advance(time.Second)
	equalIDs(t, "first page", claimIDs(b.claim(2, 1<<30)), []string{"m-0", "m-1"})
	equalIDs(t, "second page", claimIDs(b.claim(2, 1<<30)), []string{"m-2", "m-3"})
	equalIDs(t, "third page", claimIDs(b.claim(2, 1<<30)), []string{"m-4"})
	if p := b.claim(2, 1<<30); len(p.Claims) != 0 {
		t.Fatalf("claimed %v from an empty queue", claimIDs(p))
	}
}

func testClaimState(t *testing.T, b *bundle) {
	a := b.acceptance("m-1")
	b.accept("m-1")
	b.clock.Advance(time.Second)
	now := b.clock.Now()
	p, err := b.store.ClaimPage(b.ctx, now, engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, 30*time.Second)
	if err != nil || len(p.Claims) != 1 {
		t.Fatalf("ClaimPage = %+v, %v", p, err)
	}
	c := p.Claims[0]
	if c.Message.Dispatch != engine.DispatchSending || c.Message.Attempt != 1 || c.Message.ID != "m-1" {
		t.Fatalf("claimed message = %+v, want sending attempt 1", c.Message)
	}
	if c.Lease.MessageID != "m-1" || c.Lease.Token == "" || !c.Lease.ExpiresAt.Equal(now.Add(30*time.Second)) {
		t.Fatalf("lease = %+v", c.Lease)
	}
	if c.Payload.Recipient != a.Payload.Recipient || c.Payload.Parts["text"] != a.Payload.Parts["text"] {
		t.Fatalf("payload = %+v, accepted %+v", c.Payload, a.Payload)
	}
	if p.Bytes != c.Message.PayloadBytes || p.Bytes <= 0 {
		t.Fatalf("page bytes %d, message bytes %d", p.Bytes, c.Message.PayloadBytes)
	}
	m := b.message("m-1")
	if m.Dispatch != engine.DispatchSending || len(m.Attempts) != 1 {
		t.Fatalf("read back %+v, want sending with one attempt", m)
	}
	if at := m.Attempts[0]; at.Outcome != engine.AttemptInProgress || at.Attempt != 1 ||
		at.Generation != 1 || !at.StartedAt.Equal(now) || at.FinishedAt != nil || at.Provider != "sms-gateway" {
		t.Fatalf("in-progress attempt = %+v", at)
	}
	// A claimed message is not claimed again.
	if p := b.claim(10, 1<<20); len(p.Claims) != 0 {
		t.Fatalf("claimed %v twice", claimIDs(p))
	}
}

// sizes accepts messages with payload texts of the given lengths, in claim order, and returns
// their stored sizes.
func sizes(b *bundle, texts map[string]int, order []string) map[string]int64 {
	b.t.Helper()
	out := make(map[string]int64)
	for i, id := range order {
		b.accept(id, withText(texts[id]), withAcceptedAt(Epoch().Add(time.Duration(i)*time.Millisecond)))
		out[id] = b.message(id).PayloadBytes
	}
	b.clock.Advance(time.Second)
	return out
}

func testClaimByteCut(t *testing.T, b *bundle) {
	order := []string{"m-a", "m-b", "m-c", "m-d"}
	sz := sizes(b, map[string]int{"m-a": 400, "m-b": 400, "m-c": 300, "m-d": 10}, order)
	budget := sz["m-a"] + sz["m-b"] + sz["m-c"] - 1 // m-c overflows; m-d would fit but comes after
	p := b.claim(10, budget)
	equalIDs(t, "page cut by bytes", claimIDs(p), []string{"m-a", "m-b"})
	if !p.ByteBudgetCut || p.Bytes != sz["m-a"]+sz["m-b"] || p.OversizedDue != 0 {
		t.Fatalf("page = cut %v, bytes %d, oversized %d", p.ByteBudgetCut, p.Bytes, p.OversizedDue)
	}
	equalIDs(t, "next page", claimIDs(b.claim(10, budget)), []string{"m-c", "m-d"})
}

func testClaimOversized(t *testing.T, b *bundle) {
	order := []string{"m-a", "m-big", "m-b"}
	sz := sizes(b, map[string]int{"m-a": 10, "m-big": 5000, "m-b": 10}, order)
	budget := sz["m-big"] - 1
	p := b.claim(10, budget)
	equalIDs(t, "page around an oversized message", claimIDs(p), []string{"m-a", "m-b"})
	if p.OversizedDue != 1 || p.ByteBudgetCut {
		t.Fatalf("page = oversized %d, cut %v; want 1 oversized, no cut", p.OversizedDue, p.ByteBudgetCut)
	}
	if m := b.message("m-big"); m.Dispatch != engine.DispatchQueued || m.Attempt != 0 {
		t.Fatalf("oversized message = %s attempt %d, want untouched", m.Dispatch, m.Attempt)
	}
	p = b.claim(10, budget)
	if len(p.Claims) != 0 || p.OversizedDue != 1 {
		t.Fatalf("only the oversized message left: claims %v, oversized %d", claimIDs(p), p.OversizedDue)
	}
	equalIDs(t, "with a larger budget", claimIDs(b.claim(10, sz["m-big"])), []string{"m-big"})
}

func testClaimNotDue(t *testing.T, b *bundle) {
	b.accept("m-later", withNotBefore(Epoch().Add(time.Hour)), withNextAttempt(Epoch()))
	b.accept("m-retry", withNextAttempt(Epoch().Add(2*time.Hour)))
	b.clock.Set(Epoch().Add(time.Hour - time.Millisecond))
	if p := b.claim(10, 1<<20); len(p.Claims) != 0 {
		t.Fatalf("claimed %v before notBefore", claimIDs(p))
	}
	b.clock.Set(Epoch().Add(time.Hour))
	equalIDs(t, "at notBefore", claimIDs(b.claim(10, 1<<20)), []string{"m-later"})
	b.clock.Set(Epoch().Add(2 * time.Hour))
	equalIDs(t, "at the next attempt time", claimIDs(b.claim(10, 1<<20)), []string{"m-retry"})
}

func testClaimExpired(t *testing.T, b *bundle) {
	b.accept("m-1", withExpiry(Epoch().Add(time.Minute)))
	b.clock.Advance(time.Minute)
	if p := b.claim(10, 1<<20); len(p.Claims) != 0 {
		t.Fatalf("claimed %v at its expiry", claimIDs(p))
	}
}

func testClaimConcurrent(t *testing.T, b *bundle) {
	const total = 60
	batch := make([]engine.Acceptance, total)
	for i := range batch {
		batch[i] = b.acceptance(fmt.Sprintf("m-%02d", i))
	}
	for _, r := range b.store.Accept(b.ctx, batch) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	b.clock.Advance(time.Second)
	var mu sync.Mutex
	seen := make(map[string]int)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				p, err := b.store.ClaimPage(b.ctx, b.clock.Now(), engine.PageLimits{MaxEntries: 4, MaxBytes: 1 << 20}, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(p.Claims) == 0 {
					return
				}
				mu.Lock()
				for _, c := range p.Claims {
					seen[c.Message.ID]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != total {
		t.Fatalf("claimed %d distinct messages, want %d", len(seen), total)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s claimed %d times", id, n)
		}
	}
}

func testClaimInvalid(t *testing.T, b *bundle) {
	for _, l := range []engine.PageLimits{{MaxEntries: 0, MaxBytes: 1}, {MaxEntries: 1, MaxBytes: 0}} {
		if _, err := b.store.ClaimPage(b.ctx, b.clock.Now(), l, time.Minute); err == nil {
			t.Fatalf("ClaimPage(%+v) accepted limits that are not positive", l)
		}
	}
}
