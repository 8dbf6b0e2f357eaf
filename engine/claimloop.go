package engine

import (
	"context"
	"sync"
	"time"
)

// claimLoop is the page, lease and fence loop that the dispatcher and the event delivery worker
// (engine/webhooks, through ClaimLoop) share: it claims pages of due work sized to the free
// workers, holds each claim until its work is done, hands claims to per-key lanes of workers so
// that a slow key only occupies its own workers, renews every held lease every third of its
// length in one call, and stops by letting every held claim finish. What a claim is, how it is
// claimed, worked, fenced and renewed is the caller's (ClaimLoopConfig).
//
// Recording. Work may hand back the recording of its outcome (a store write that waits for a
// commit) instead of doing it: the worker then takes its next claim at once, and the claim stays
// held, its lease renewed, until the recording has run. A worker that waited for the commit
// itself spent half its time waiting on the store (block profile of the drain: 54% of the
// workers' blocked time in the finish, 27% in the round trip to the gateway), so the queue
// drained at workers ÷ (send + commit) while the machine idled. Claims being recorded do not
// count against the cap (they need no worker), but at most MaxHeld of them wait at once: a
// store slower than the sends holds the workers back instead of growing memory.
type claimLoop[C any] struct {
	cfg       ClaimLoopConfig[C]
	wake      chan struct{}
	freed     chan struct{}
	recording chan struct{} // one token per claim whose outcome is being recorded
	recorders sync.WaitGroup

	mu       sync.Mutex
	held     map[string]C
	recorded int // held claims whose outcome is being recorded
	lanes    map[string]*lane[C]
}

// ClaimLoopConfig wires a claim loop. Every member but Maintain is required.
type ClaimLoopConfig[C any] struct {
	// Concurrency is the number of workers of each lane.
	Concurrency int
	// LaneWorkers, when set, is the number of workers of one lane instead (at least 1).
	LaneWorkers func(lane string) int
	// Cap is how many claims the loop may hold at once, asked before each claim; it never
	// exceeds MaxHeld.
	Cap func() int
	// MaxHeld is the most claims the loop ever holds (each lane's queue holds that many).
	MaxHeld int
	// LeaseFor is the lease length; leases are renewed every third of it.
	LeaseFor time.Duration
	// PollInterval is the wait between claims when nothing is due (and between maintenances).
	PollInterval time.Duration
	Clock        Clock
	// Key names a claim (unique among held claims) and its lane.
	Key func(c C) (id, lane string)
	// Claim claims at most want items and reports whether more are likely due.
	Claim func(ctx context.Context, want int) (claims []C, full bool, err error)
	// Work handles one claim. It either records the claim's outcome under its lease itself and
	// returns nil, or returns a function that records it; the loop runs that function apart
	// from the worker (see Recording). The claim is released once its outcome is recorded. Its
	// ctx is not cancelled by the loop's: a graceful stop lets work and recordings end.
	Work func(ctx context.Context, c C) (record func())
	// Renew extends the leases of the claims held now until until.
	Renew func(ctx context.Context, held []C, until time.Time)
	// Maintain, when set, runs before a claim at most once per PollInterval.
	Maintain func(ctx context.Context)
	// OnError is told about a claim that failed while the loop's ctx is live.
	OnError func(err error)
}

// ClaimLoop is the exported face of the shared loop, for the event delivery worker.
type ClaimLoop[C any] struct{ l *claimLoop[C] }

// NewClaimLoop returns a loop; Run runs it.
func NewClaimLoop[C any](cfg ClaimLoopConfig[C]) *ClaimLoop[C] {
	return &ClaimLoop[C]{l: newClaimLoop(cfg)}
}

// Run claims and works until ctx ends, then stops claiming, lets every held claim finish, and
// returns.
func (c *ClaimLoop[C]) Run(ctx context.Context) { c.l.run(ctx) }

// Wake asks the loop to claim now instead of at the next poll.
func (c *ClaimLoop[C]) Wake() { c.l.wakeUp() }

// Held returns how many claims the loop holds.
func (c *ClaimLoop[C]) Held() int { return c.l.heldCount() }

func newClaimLoop[C any](cfg ClaimLoopConfig[C]) *claimLoop[C] {
	return &claimLoop[C]{cfg: cfg, wake: make(chan struct{}, 1), freed: make(chan struct{}, 1),
		recording: make(chan struct{}, max(1, cfg.MaxHeld)), held: map[string]C{}, lanes: map[string]*lane[C]{}}
}

func (l *claimLoop[C]) wakeUp() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// run is the loop: claim when woken, when work was freed (past the low water), or at the poll.
func (l *claimLoop[C]) run(ctx context.Context) {
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	var renewWG sync.WaitGroup
	renewCtx, stopRenew := context.WithCancel(context.WithoutCancel(ctx))
	renewWG.Add(1)
	go func() { defer renewWG.Done(); l.renewLoop(renewCtx) }()
	timer := time.NewTimer(0)
	defer timer.Stop()
	lastMaintenance := time.Time{}
	for {
		select {
		case <-ctx.Done():
			l.stopLanes()
			stopRenew()
			renewWG.Wait()
			return
		case <-timer.C:
		case <-l.wake:
		case <-l.freed:
			if c := l.cfg.Cap(); l.freeSlots(c) < claimLowWater(c) {
				// Claiming for one or two free workers costs a whole claim for an item or two;
				// wait until more work has finished. The poll timer still runs.
				continue
			}
		}
		if l.cfg.Maintain != nil {
			if now := l.cfg.Clock.Now(); now.Sub(lastMaintenance) >= l.cfg.PollInterval {
				lastMaintenance = now
				l.cfg.Maintain(ctx)
			}
		}
		full, err := l.claimOnce(ctx, workCtx)
		if err != nil && ctx.Err() == nil && l.cfg.OnError != nil {
			l.cfg.OnError(err)
		}
		wait := l.cfg.PollInterval
		if full {
			wait = 0
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// freeSlots is how many more claims the loop may hold under a cap of claimCap: claims being
// recorded need no worker and do not count.
func (l *claimLoop[C]) freeSlots(claimCap int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return claimCap - (len(l.held) - l.recorded)
}

// claimLowWater is how many workers must be free before finished work triggers a claim: an
// eighth of the cap, so that under load claims come in pages, not one item at a time.
func claimLowWater(claimCap int) int { return max(1, claimCap/8) }

// claimOnce claims one page sized to the free capacity and hands its claims to the lanes. It
// reports whether more work is likely waiting.
func (l *claimLoop[C]) claimOnce(ctx, workCtx context.Context) (bool, error) {
	free := l.freeSlots(l.cfg.Cap())
	if free <= 0 {
		return false, nil
	}
	claims, full, err := l.cfg.Claim(ctx, free)
	if err != nil {
		return false, err
	}
	l.hold(claims)
	for _, c := range claims {
		_, key := l.cfg.Key(c)
		l.laneFor(workCtx, key).queue <- c
	}
	return full, nil
}

// hold records claims as held.
func (l *claimLoop[C]) hold(claims []C) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range claims {
		id, _ := l.cfg.Key(c)
		l.held[id] = c
	}
}

// release forgets a finished claim and tells the loop there is room.
func (l *claimLoop[C]) release(c C) { l.forget(c, false) }

// forget drops a claim from the held ones, and from those being recorded when it was, in one
// step (freeSlots never sees the one without the other), then tells the loop there is room.
func (l *claimLoop[C]) forget(c C, recorded bool) {
	id, _ := l.cfg.Key(c)
	l.mu.Lock()
	delete(l.held, id)
	if recorded {
		l.recorded--
	}
	l.mu.Unlock()
	l.signalFreed()
}

// signalFreed tells the loop that a worker is free.
func (l *claimLoop[C]) signalFreed() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// work runs one claim on a worker: Work, then its recording (see Recording) apart from the
// worker, which is free for the next claim as soon as the recording has a token.
func (l *claimLoop[C]) work(ctx context.Context, c C) {
	record := l.cfg.Work(ctx, c)
	if record == nil {
		l.release(c)
		return
	}
	l.recording <- struct{}{}
	l.mu.Lock()
	l.recorded++
	l.mu.Unlock()
	l.signalFreed()
	l.recorders.Go(func() {
		record()
		l.forget(c, true)
		<-l.recording
	})
}

// holds reports whether a claim with this id is held.
func (l *claimLoop[C]) holds(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.held[id]
	return ok
}

func (l *claimLoop[C]) heldCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.held)
}

// renewLoop extends every held lease every third of the lease length.
func (l *claimLoop[C]) renewLoop(ctx context.Context) {
	t := time.NewTicker(l.cfg.LeaseFor / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.renewHeld(ctx)
		}
	}
}

// renewHeld extends the leases of every held claim now.
func (l *claimLoop[C]) renewHeld(ctx context.Context) {
	l.mu.Lock()
	held := make([]C, 0, len(l.held))
	for _, c := range l.held {
		held = append(held, c)
	}
	l.mu.Unlock()
	if len(held) > 0 {
		l.cfg.Renew(ctx, held, l.cfg.Clock.Now().Add(l.cfg.LeaseFor))
	}
}

// lane is one key's queue of claims and its workers.
type lane[C any] struct {
	queue  chan C
	wg     sync.WaitGroup
	closed bool
}

// laneFor returns the lane of a key, starting its workers on first use. Its queue holds as many
// claims as the loop may hold, so handing a claim to it never blocks for long.
func (l *claimLoop[C]) laneFor(workCtx context.Context, key string) *lane[C] {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln, ok := l.lanes[key]
	if !ok {
		ln = &lane[C]{queue: make(chan C, max(1, l.cfg.MaxHeld))}
		l.lanes[key] = ln
		workers := l.cfg.Concurrency
		if l.cfg.LaneWorkers != nil {
			workers = max(1, l.cfg.LaneWorkers(key))
		}
		for range workers {
			ln.wg.Add(1)
			go func() {
				defer ln.wg.Done()
				for c := range ln.queue {
					l.work(workCtx, c)
				}
			}()
		}
	}
	return ln
}

// stopLanes closes every lane and waits until each held claim has been worked and recorded.
func (l *claimLoop[C]) stopLanes() {
	l.mu.Lock()
	lanes := make([]*lane[C], 0, len(l.lanes))
	for _, ln := range l.lanes {
		if !ln.closed {
			ln.closed = true
			close(ln.queue)
		}
		lanes = append(lanes, ln)
	}
	l.mu.Unlock()
	for _, ln := range lanes {
		ln.wg.Wait()
	}
	l.recorders.Wait()
}
