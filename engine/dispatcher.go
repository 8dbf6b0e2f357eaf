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
	cfg DispatcherConfig
	log *slog.Logger
	// loop claims pages, holds the claims not yet finished, runs one lane of workers per
	// provider and renews the held leases (claimloop.go).
	loop *claimLoop[Claim]

	// maxHeld is heldCap, worked out once: the providers and their limits do not change.
	maxHeld int

	mu     sync.Mutex
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
	d := &Dispatcher{cfg: cfg, log: cfg.Logger}
	d.maxHeld = d.heldCap()
	d.loop = newClaimLoop(ClaimLoopConfig[Claim]{
		Concurrency: cfg.Concurrency, LaneWorkers: d.laneWorkers, Cap: d.claimCap, MaxHeld: d.maxHeld,
		LeaseFor: cfg.LeaseFor, PollInterval: cfg.PollInterval, Clock: cfg.Clock,
		Key:      func(c Claim) (string, string) { return c.Message.ID, c.Message.Provider },
		Claim:    d.claimPage,
		Work:     d.attempt,
		Renew:    d.renew,
		Maintain: d.maintain,
		OnError:  func(err error) { d.log.Warn("claiming a page", "err", err) },
	})
	return d
}

// Wake asks the dispatcher to look for due work now (after an acceptance, or when a peer
// connected) instead of at the next poll.
func (d *Dispatcher) Wake() { d.loop.wakeUp() }

// Figures returns the dispatcher's page figures.
func (d *Dispatcher) Figures() PageFigures {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := d.figure
	f.ClaimedHeld = d.loop.heldCount()
	if d.cfg.Admission != nil {
		f.GivenWay = d.cfg.Admission.HeldBack()
	}
	return f
}

// heldCap bounds the claims held at once: one per worker of each provider lane. A claim that
// waits in memory would, after a crash, look like a send that may have left (its lease lapses
// mid-"send"), so the dispatcher claims no more than its workers can start at once.
func (d *Dispatcher) heldCap() int {
	if len(d.cfg.Providers) == 0 {
		return d.cfg.Concurrency
	}
	n := 0
	for id := range d.cfg.Providers {
		n += d.laneWorkers(id)
	}
	return n
}

// laneWorkers is the number of workers of a provider's lane: Concurrency, or the provider's
// declared concurrency limit when that is lower. A worker beyond the limit would hold its claim
// while it waits for one of the provider's slots, and after a crash that claim would look like
// a send that may have left.
func (d *Dispatcher) laneWorkers(provider string) int {
	n := d.cfg.Concurrency
	if d.cfg.Package == nil {
		return max(1, n)
	}
	if p := d.cfg.Package.Provider(provider); p != nil && p.Adapter != nil && p.Adapter.ConcurrencyLimit > 0 {
		n = min(n, p.Adapter.ConcurrencyLimit)
	}
	return max(1, n)
}

// Run claims and sends until ctx ends, then stops claiming, lets every claimed message finish
// its send, and returns. Sends are not cancelled by ctx: a graceful stop never turns a send
// into maybe-sent.
func (d *Dispatcher) Run(ctx context.Context) error {
	if err := d.Recover(ctx); err != nil && ctx.Err() == nil {
		d.log.Warn("recovering lapsed leases", "err", err)
	}
	d.loop.run(ctx)
	return nil
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
	full := d.maxHeld
	if d.cfg.Admission == nil {
		return full
	}
	return min(max(d.cfg.Admission.ClaimCap(full), 1), full)
}

// claimPage claims one page of at most want messages (and the batch size) and records its
// figures; it reports whether the page was full (more work is likely waiting).
func (d *Dispatcher) claimPage(ctx context.Context, want int) ([]Claim, bool, error) {
	want = min(want, d.cfg.BatchSize)
	page, err := d.cfg.Store.ClaimPage(ctx, d.cfg.Clock.Now(), PageLimits{MaxEntries: want, MaxBytes: d.cfg.MaxPayloadBytes}, d.cfg.LeaseFor)
	if err != nil {
		return nil, false, err
	}
	d.pageFigures(page)
	return page.Claims, len(page.Claims) == want || page.ByteBudgetCut, nil
}

// pageFigures records a claimed page's figures for GET /v1/slo.
func (d *Dispatcher) pageFigures(page Page) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.figure.LastPageEntries, d.figure.LastPageBytes = len(page.Claims), page.Bytes
	d.figure.OversizedSkipsTotal += int64(page.OversizedDue)
	if page.ByteBudgetCut {
		d.figure.ByteBudgetDeferralsTotal++
	}
}

// renew extends the leases of the held claims, in one store call.
func (d *Dispatcher) renew(ctx context.Context, held []Claim, until time.Time) {
	leases := make([]LeaseRef, len(held))
	for i := range held {
		leases[i] = held[i].Lease
	}
	if err := d.cfg.Store.RenewLease(ctx, leases, until); err != nil && !errors.Is(err, ErrLeaseLost) {
		d.log.Warn("renewing leases", "err", err)
	}
}

// RenewHeld extends the leases of every held claim now.
func (d *Dispatcher) RenewHeld(ctx context.Context) { d.loop.renewHeld(ctx) }

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
		d.pageFigures(page)
		d.loop.hold(page.Claims)
		if len(page.Claims) == 0 {
			return sent, nil
		}
		for _, c := range page.Claims {
			d.send(ctx, c)
			d.loop.release(c)
			sent++
		}
	}
}
