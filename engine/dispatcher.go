package engine

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"switchboard/packages"
)

// DispatcherConfig wires a Dispatcher. Every numeric member must be positive (the runtime file
// loader refuses anything else at startup).
type DispatcherConfig struct {
	Package   *packages.Package
	Store     Store
	Providers map[string]Provider // by provider id
	Clock     Clock
	Logger    *slog.Logger
	// Concurrency is the number of sends in flight per provider lane.
	Concurrency     int
	BatchSize       int
	MaxPayloadBytes int64
	PollInterval    time.Duration
	LeaseFor        time.Duration
	// Jitter returns a number in [0,1) for the backoff; nil uses math/rand/v2.
	Jitter func() float64
	// Observe, when set, is told about every finished attempt (for metrics).
	Observe func(provider string, class OutcomeClass, d time.Duration)
	// Reconciler, when set, applies receipts stranded between two writers at each maintenance
	// pass (a store whose writers run side by side: PostgreSQL). Nil has none to apply.
	Reconciler ReceiptReconciler
	// Admission, when set, caps the claims the dispatcher holds while acceptance needs the
	// machine more (see Admission). Nil never holds it back.
	Admission Admission
}

// Dispatcher claims due messages in bounded pages under leases, hands each to its provider's
// lane of workers, and records every outcome fenced by the lease.
type Dispatcher struct {
	cfg   DispatcherConfig
	log   *slog.Logger
	wake  chan struct{}
	freed chan struct{}

	mu     sync.Mutex
	held   map[string]LeaseRef // claims not yet finished, by message id
	lanes  map[string]*lane
	figure PageFigures
}

// PageFigures are the dispatcher's own figures for GET /v1/slo.
type PageFigures struct {
	LastPageEntries          int
	LastPageBytes            int64
	OversizedSkipsTotal      int64
	ByteBudgetDeferralsTotal int64
	ClaimedHeld              int
	LeaseLostTotal           int64
	// GivenWay is the time the Admission policy held the dispatcher back (to give way to bursts
	// of submissions).
	GivenWay time.Duration
}

// NewDispatcher returns a Dispatcher; Run starts it.
func NewDispatcher(cfg DispatcherConfig) *Dispatcher {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Jitter == nil {
		cfg.Jitter = rand.Float64
	}
	if cfg.LeaseFor <= 0 {
		cfg.LeaseFor = time.Minute
	}
	return &Dispatcher{
		cfg: cfg, log: cfg.Logger, wake: make(chan struct{}, 1), freed: make(chan struct{}, 1),
		held: map[string]LeaseRef{}, lanes: map[string]*lane{},
	}
}

// Wake asks the dispatcher to look for due work now (after an acceptance, or when a peer
// connected) instead of at the next poll.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Figures returns the dispatcher's page figures.
func (d *Dispatcher) Figures() PageFigures {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.figure
	f.ClaimedHeld = len(d.held)
	if d.cfg.Admission != nil {
		f.GivenWay = d.cfg.Admission.HeldBack()
	}
	return f
}

// heldCap bounds the claims held at once: one per worker of each provider lane. A claim that
// waits in memory would, after a crash, look like a send that may have left (its lease lapses
// mid-"send"), so the dispatcher claims no more than its workers can start at once.
func (d *Dispatcher) heldCap() int { return d.cfg.Concurrency * max(1, len(d.cfg.Providers)) }

// Run claims and sends until ctx ends, then stops claiming, lets every claimed message finish
// its send, and returns. Sends are not cancelled by ctx: a graceful stop never turns a send
// into maybe-sent.
func (d *Dispatcher) Run(ctx context.Context) error {
	sendCtx, cancelSends := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelSends()
	var renewWG sync.WaitGroup
	renewCtx, stopRenew := context.WithCancel(context.WithoutCancel(ctx))
	renewWG.Add(1)
	go func() { defer renewWG.Done(); d.renewLoop(renewCtx) }()
	if err := d.Recover(ctx); err != nil && ctx.Err() == nil {
		d.log.Warn("recovering lapsed leases", "err", err)
	}
	timer := time.NewTimer(0)
	defer timer.Stop()
	lastMaintenance := time.Time{}
	for {
		select {
		case <-ctx.Done():
			d.stopLanes()
			stopRenew()
			renewWG.Wait()
			return nil
		case <-timer.C:
		case <-d.wake:
		case <-d.freed:
			if c := d.claimCap(); d.freeSlots(c) < claimLowWater(c) {
				// Claiming for one or two free workers costs a whole claim (three statements)
				// for a message or two; wait until more sends have finished. The poll timer
				// still runs.
				continue
			}
		}
		if now := d.cfg.Clock.Now(); now.Sub(lastMaintenance) >= d.cfg.PollInterval {
			lastMaintenance = now
			d.maintain(ctx)
		}
		full, err := d.claimOnce(ctx, sendCtx)
		if err != nil && ctx.Err() == nil {
			d.log.Warn("claiming a page", "err", err)
		}
		wait := d.cfg.PollInterval
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

// maintain expires due messages past their expiry, recovers lapsed leases and applies
// stranded receipts (through the Reconciler it was given, if any).
func (d *Dispatcher) maintain(ctx context.Context) {
	now := d.cfg.Clock.Now()
	for {
		n, err := d.cfg.Store.ExpireDue(ctx, now, 500)
		if err != nil {
			if ctx.Err() == nil {
				d.log.Warn("expiring due messages", "err", err)
			}
			break
		}
		if n < 500 {
			break
		}
	}
	if err := d.Recover(ctx); err != nil && ctx.Err() == nil {
		d.log.Warn("recovering lapsed leases", "err", err)
	}
	if d.cfg.Reconciler != nil {
		if _, err := d.cfg.Reconciler.ReconcileReceipts(ctx, now, 500); err != nil && ctx.Err() == nil {
			d.log.Warn("applying stranded receipts", "err", err)
		}
	}
}

// claimCap is how many claims the dispatcher may hold now: heldCap, or less while the Admission
// policy holds it back, but never fewer than one.
func (d *Dispatcher) claimCap() int {
	full := d.heldCap()
	if d.cfg.Admission == nil {
		return full
	}
	return min(max(d.cfg.Admission.ClaimCap(full), 1), full)
}

// freeSlots is how many more claims the dispatcher may hold now, under a cap of claimCap.
func (d *Dispatcher) freeSlots(claimCap int) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return claimCap - len(d.held)
}

// claimLowWater is how many workers must be free before a finished send triggers a claim: an
// eighth of the cap, so that under load claims come in pages, not one message at a time.
func claimLowWater(claimCap int) int { return max(1, claimCap/8) }

// claimOnce claims one page sized to the free capacity and hands its claims to the lanes. It
// reports whether the page was full (more work is likely waiting).
func (d *Dispatcher) claimOnce(ctx, sendCtx context.Context) (bool, error) {
	free := d.freeSlots(d.claimCap())
	if free <= 0 {
		return false, nil
	}
	want := min(free, d.cfg.BatchSize)
	page, err := d.cfg.Store.ClaimPage(ctx, d.cfg.Clock.Now(), PageLimits{MaxEntries: want, MaxBytes: d.cfg.MaxPayloadBytes}, d.cfg.LeaseFor)
	if err != nil {
		return false, err
	}
	d.hold(page)
	for i := range page.Claims {
		d.laneFor(sendCtx, page.Claims[i].Message.Provider).push(page.Claims[i])
	}
	return len(page.Claims) == want || page.ByteBudgetCut, nil
}

// hold records a claimed page: its figures for GET /v1/slo, and its leases as held.
func (d *Dispatcher) hold(page Page) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.figure.LastPageEntries, d.figure.LastPageBytes = len(page.Claims), page.Bytes
	d.figure.OversizedSkipsTotal += int64(page.OversizedDue)
	if page.ByteBudgetCut {
		d.figure.ByteBudgetDeferralsTotal++
	}
	for _, c := range page.Claims {
		d.held[c.Message.ID] = c.Lease
	}
}

// release forgets a finished claim and tells the claim loop there is room.
func (d *Dispatcher) release(id string) {
	d.mu.Lock()
	delete(d.held, id)
	d.mu.Unlock()
	select {
	case d.freed <- struct{}{}:
	default:
	}
}

// renewLoop extends every held lease every third of the lease length, in one store call.
func (d *Dispatcher) renewLoop(ctx context.Context) {
	t := time.NewTicker(d.cfg.LeaseFor / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.RenewHeld(ctx)
		}
	}
}

// RenewHeld extends the leases of every held claim now.
func (d *Dispatcher) RenewHeld(ctx context.Context) {
	d.mu.Lock()
	leases := make([]LeaseRef, 0, len(d.held))
	for _, l := range d.held {
		leases = append(leases, l)
	}
	d.mu.Unlock()
	if len(leases) == 0 {
		return
	}
	until := d.cfg.Clock.Now().Add(d.cfg.LeaseFor)
	if err := d.cfg.Store.RenewLease(ctx, leases, until); err != nil && !errors.Is(err, ErrLeaseLost) {
		d.log.Warn("renewing leases", "err", err)
	}
}

// DispatchDue expires what is past its expiry, recovers lapsed leases, then claims and sends
// every due message, page by page, in the caller's goroutine, until no due work is left. It
// returns how many attempts it made. Tests drive the dispatcher with it under a fake clock; Run
// is the concurrent loop serve uses.
func (d *Dispatcher) DispatchDue(ctx context.Context) (int, error) {
	d.maintain(ctx)
	sent := 0
	for {
		page, err := d.cfg.Store.ClaimPage(ctx, d.cfg.Clock.Now(),
			PageLimits{MaxEntries: d.cfg.BatchSize, MaxBytes: d.cfg.MaxPayloadBytes}, d.cfg.LeaseFor)
		if err != nil {
			return sent, err
		}
		d.hold(page)
		if len(page.Claims) == 0 {
			return sent, nil
		}
		for _, c := range page.Claims {
			d.send(ctx, c)
			sent++
		}
	}
}
