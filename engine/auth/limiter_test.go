package auth

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/packages"
)

func requireRateLimited(t testing.TB, err error, retry time.Duration) {
	t.Helper()
	var p *engine.Problem
	if !errors.As(err, &p) || p.Code != engine.CodeRateLimitExceeded {
		t.Fatalf("err = %v, want rate-limit.exceeded", err)
	}
	if p.RetryAfter != retry {
		t.Fatalf("RetryAfter = %s, want %s", p.RetryAfter, retry)
	}
}

func TestLimiterBurstThenRefusalThenRefill(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(testStart)
	l := NewLimiter(clock)
	profile := &packages.AccessProfile{ID: "case-notices", RequestsPerMinute: 60, Burst: 3}
	caller := CallerKey(testIssuer, "alice")
	for i := 0; i < 3; i++ {
		if err := l.Allow(caller, profile); err != nil {
			t.Fatalf("request %d of the burst: %v", i+1, err)
		}
	}
	requireRateLimited(t, l.Allow(caller, profile), time.Second)

	// Another caller has its own bucket.
	if err := l.Allow(CallerKey(testIssuer, "bob"), profile); err != nil {
		t.Fatalf("another caller: %v", err)
	}
	// Same subject at another issuer is another caller.
	if err := l.Allow(CallerKey("https://other.example", "alice"), profile); err != nil {
		t.Fatalf("same subject, other issuer: %v", err)
	}

	// Half a token back: still refused, Retry-After rounds the remaining half second up to 1 s.
	clock.Advance(500 * time.Millisecond)
	requireRateLimited(t, l.Allow(caller, profile), time.Second)
	clock.Advance(500 * time.Millisecond)
	if err := l.Allow(caller, profile); err != nil {
		t.Fatalf("after one token refilled: %v", err)
	}
	requireRateLimited(t, l.Allow(caller, profile), time.Second)

	// Fully refilled after burst/rate, and never beyond the burst.
	clock.Advance(time.Hour)
	for i := 0; i < 3; i++ {
		if err := l.Allow(caller, profile); err != nil {
			t.Fatalf("refilled request %d: %v", i+1, err)
		}
	}
	requireRateLimited(t, l.Allow(caller, profile), time.Second)
}

func TestLimiterRetryAfterRoundsUpToWholeSeconds(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(testStart)
	l := NewLimiter(clock)
	// 4 per minute: a token every 15 s.
	profile := &packages.AccessProfile{ID: "slow", RequestsPerMinute: 4, Burst: 1}
	if err := l.Allow("c", profile); err != nil {
		t.Fatal(err)
	}
	requireRateLimited(t, l.Allow("c", profile), 15*time.Second)
	clock.Advance(10*time.Second + 100*time.Millisecond) // 4.9 s to go
	requireRateLimited(t, l.Allow("c", profile), 5*time.Second)
}

func TestLimiterRefusesUnusableProfiles(t *testing.T) {
	t.Parallel()
	l := NewLimiter(enginetest.NewFakeClock(testStart))
	for _, p := range []*packages.AccessProfile{nil, {ID: "a", Burst: 1}, {ID: "b", RequestsPerMinute: 1}} {
		if err := l.Allow("c", p); engine.CodeOf(err) != engine.CodeServiceUnavailable {
			t.Fatalf("profile %+v: err = %v", p, err)
		}
	}
}

func TestLimiterForgetsIdleCallers(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(testStart)
	l := NewLimiter(clock)
	l.max = 50
	profile := &packages.AccessProfile{ID: "p", RequestsPerMinute: 600, Burst: 10} // full again after 1 s
	for i := 0; i < 40; i++ {
		if err := l.Allow(fmt.Sprintf("idle-%d", i), profile); err != nil {
			t.Fatal(err)
		}
	}
	// A busy caller drains its bucket.
	for i := 0; i < 10; i++ {
		_ = l.Allow("busy", profile)
	}
	requireRateLimited(t, l.Allow("busy", profile), time.Second)

	clock.Advance(sweepInterval)
	if err := l.Allow("newcomer", profile); err != nil {
		t.Fatal(err)
	}
	if n := l.callers(); n != 1 {
		t.Fatalf("callers remembered after the sweep = %d, want 1 (idle ones forgotten)", n)
	}

	// Many active callers at once never exceed the bound.
	for i := 0; i < 200; i++ {
		_ = l.Allow(fmt.Sprintf("active-%d", i), profile)
		if n := l.callers(); n > l.max {
			t.Fatalf("callers = %d, bound %d", n, l.max)
		}
	}
}

func TestLimiterSweepKeepsDrainedBuckets(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(testStart)
	l := NewLimiter(clock)
	profile := &packages.AccessProfile{ID: "p", RequestsPerMinute: 1, Burst: 2} // refill takes 2 minutes
	for i := 0; i < 2; i++ {
		_ = l.Allow("c", profile)
	}
	clock.Advance(sweepInterval) // one token back, bucket not full: must not be forgotten
	_ = l.Allow("other", profile)
	if err := l.Allow("c", profile); err != nil {
		t.Fatalf("the refilled token: %v", err)
	}
	requireRateLimited(t, l.Allow("c", profile), time.Minute)
}

func TestLimiterConcurrentCallersGetExactlyTheBurst(t *testing.T) {
	t.Parallel()
	l := NewLimiter(enginetest.NewFakeClock(testStart))
	profile := &packages.AccessProfile{ID: "p", RequestsPerMinute: 60, Burst: 25}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if l.Allow("shared", profile) == nil {
					mu.Lock()
					allowed++
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if allowed != 25 {
		t.Fatalf("allowed %d of 80 at one instant, want the burst of 25", allowed)
	}
}
