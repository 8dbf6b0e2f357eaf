package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"switchboard/packages"
)

// testItems hands out its items in order, at most want a claim.
type testItems struct {
	mu    sync.Mutex
	items []string
}

func (q *testItems) claim(_ context.Context, want int) ([]string, bool, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(want, len(q.items))
	out := q.items[:n:n]
	q.items = q.items[n:]
	return out, false, nil
}

// A worker whose outcome is being recorded takes the next claim at once; the recorded claim
// stays held until its recording ran, and a stop waits for the recording.
func TestClaimLoopWorksOnWhileAnOutcomeIsRecorded(t *testing.T) {
	t.Parallel()
	q := &testItems{items: []string{"a", "b"}}
	unblock := make(chan struct{})
	workedB := make(chan struct{})
	ran := make(chan struct{})
	var mu sync.Mutex
	var recordedA, stoppedEarly bool
	loop := NewClaimLoop(ClaimLoopConfig[string]{
		Concurrency: 1, Cap: func() int { return 1 }, MaxHeld: 2,
		LeaseFor: time.Hour, PollInterval: time.Hour, Clock: SystemClock{},
		Key:   func(c string) (string, string) { return c, "lane" },
		Claim: q.claim,
		Work: func(_ context.Context, c string) func() {
			if c == "b" {
				close(workedB)
				return nil
			}
			return func() {
				<-unblock
				select {
				case <-ran:
					mu.Lock()
					stoppedEarly = true
					mu.Unlock()
				default:
				}
				mu.Lock()
				recordedA = true
				mu.Unlock()
			}
		},
		Renew: func(context.Context, []string, time.Time) {},
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { defer close(ran); loop.Run(ctx) }()

	select {
	case <-workedB:
	case <-time.After(10 * time.Second):
		t.Fatal("the one worker never took b while a's outcome was being recorded")
	}
	if n := loop.Held(); n != 1 {
		t.Errorf("held while a is recorded and b is done = %d, want 1 (a)", n)
	}
	cancel()
	select {
	case <-ran:
		t.Error("Run returned while an outcome was still being recorded")
	case <-time.After(100 * time.Millisecond):
	}
	close(unblock)
	<-ran
	mu.Lock()
	defer mu.Unlock()
	if !recordedA || stoppedEarly {
		t.Errorf("recorded a = %v, Run returned first = %v", recordedA, stoppedEarly)
	}
	if n := loop.Held(); n != 0 {
		t.Errorf("held after the stop = %d", n)
	}
}

// A provider whose adapter declares a lower concurrency limit gets that many workers, and the
// dispatcher holds no more claims than its lanes have workers.
func TestDispatcherLanesFollowTheProvidersLimits(t *testing.T) {
	t.Parallel()
	pkg := &packages.Package{Providers: []*packages.Provider{
		{ID: "narrow", Kind: "http", Adapter: &packages.Adapter{ConcurrencyLimit: 16}},
		{ID: "wide", Kind: "http", Adapter: &packages.Adapter{ConcurrencyLimit: 128}},
		{ID: "mail", Kind: "smtp"},
	}}
	d := NewDispatcher(DispatcherConfig{Package: pkg, Concurrency: 64, BatchSize: 100, MaxPayloadBytes: 1 << 20,
		PollInterval: time.Second, Clock: SystemClock{},
		Providers: map[string]Provider{"narrow": nil, "wide": nil, "mail": nil}})
	for id, want := range map[string]int{"narrow": 16, "wide": 64, "mail": 64, "unknown": 64} {
		if got := d.laneWorkers(id); got != want {
			t.Errorf("lane workers of %s = %d, want %d", id, got, want)
		}
	}
	if got := d.heldCap(); got != 16+64+64 {
		t.Errorf("held cap = %d, want %d", got, 16+64+64)
	}
}
