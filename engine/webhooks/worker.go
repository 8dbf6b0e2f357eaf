package webhooks

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"switchboard/engine"
)

// Outcomes a delivery attempt is observed with.
const (
	OutcomeDelivered = "delivered" // 2xx
	OutcomeRetry     = "retry"     // failed; tried again later
	OutcomeFailed    = "failed"    // failed, and the schedule is spent (or the subject is gone)
)

// Config wires a Worker.
type Config struct {
	Store     engine.EventStore
	Endpoints []Endpoint
	Clock     engine.Clock
	Logger    *slog.Logger
	// PollInterval is the wait between claims of an endpoint with nothing due; 0 means 1 s.
	// Wake makes a loop claim at once (the store calls it after writing events).
	PollInterval time.Duration
	// Transport carries the deliveries; nil builds one per endpoint. Redirects are never
	// followed whatever it does.
	Transport http.RoundTripper
	// Observe, when set, is told about every attempt: its outcome, and for a delivered one the
	// time from the change to the answer.
	Observe func(endpoint, outcome string, lag time.Duration)
}

// Worker delivers the outbox rows of every endpoint.
type Worker struct {
	cfg       Config
	log       *slog.Logger
	endpoints []*endpointLoop
}

// endpointLoop is one endpoint's claim loop, client and outcome recorder.
type endpointLoop struct {
	w      *Worker
	ep     Endpoint
	client *http.Client
	loop   *engine.ClaimLoop[*delivery]
	lease  time.Duration
	// finishes, while Run runs, takes the outcomes of attempts to the recorder (recorder.go);
	// nil means each is recorded at once (DeliverDue).
	finishes chan finishing
}

// heldFor is how many rows an endpoint's loop may hold: a page per claim large enough that the
// claims (one writer round trip each) never bound the delivery rate, however many workers.
func heldFor(concurrency int) int { return min(1024, max(64, 8*concurrency)) }

// delivery is one claimed row with its subject, read when the page was claimed.
type delivery struct {
	claim engine.EventClaim
	msg   *engine.Message
	entry *engine.InboxEntry
}

// New returns a Worker; Run runs it. Endpoint timeouts and concurrency out of range take the
// defaults (the runtime file loader refuses them first).
func New(cfg Config) *Worker {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	w := &Worker{cfg: cfg, log: cfg.Logger}
	for _, ep := range cfg.Endpoints {
		if ep.Timeout < MinTimeout || ep.Timeout > MaxTimeout {
			ep.Timeout = DefaultTimeout
		}
		if ep.Concurrency < 1 || ep.Concurrency > MaxConcurrency {
			ep.Concurrency = DefaultConcurrency
		}
		el := &endpointLoop{w: w, ep: ep, client: newClient(ep, cfg.Transport), lease: max(2*ep.Timeout, 10*time.Second)}
		held := heldFor(ep.Concurrency)
		el.loop = engine.NewClaimLoop(engine.ClaimLoopConfig[*delivery]{
			Concurrency: ep.Concurrency, Cap: func() int { return held }, MaxHeld: held,
			LeaseFor: el.lease, PollInterval: cfg.PollInterval, Clock: cfg.Clock,
			Key:   func(d *delivery) (string, string) { return strconv.FormatInt(d.claim.Lease.ID, 10), ep.ID },
			Claim: el.claim,
			Work:  func(ctx context.Context, d *delivery) func() { el.deliver(ctx, d); return nil },
			Renew: el.renew,
			OnError: func(err error) {
				w.log.Warn("claiming events", "endpoint", ep.ID, "err", err)
			},
		})
		w.endpoints = append(w.endpoints, el)
	}
	return w
}

// Run delivers until ctx ends, then lets every delivery in flight finish, records their
// outcomes and returns.
func (w *Worker) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, el := range w.endpoints {
		el.finishes = make(chan finishing, heldFor(el.ep.Concurrency))
		recorded := make(chan struct{})
		go func() { defer close(recorded); el.record(context.WithoutCancel(ctx)) }()
		wg.Go(func() {
			el.loop.Run(ctx)
			close(el.finishes)
			<-recorded
			el.finishes = nil
		})
	}
	wg.Wait()
}

// Wake makes every endpoint's loop claim now. It never blocks.
func (w *Worker) Wake() {
	for _, el := range w.endpoints {
		el.loop.Wake()
	}
}

// DeliverDue claims and delivers every due row of every endpoint, one page at a time in the
// caller's goroutine, until none is due; it returns how many attempts it made. Tests drive the
// worker with it under a fake clock; Run is the concurrent loop serve uses.
func (w *Worker) DeliverDue(ctx context.Context) (int, error) {
	n := 0
	for _, el := range w.endpoints {
		for {
			page, _, err := el.claim(ctx, el.ep.Concurrency)
			if err != nil {
				return n, err
			}
			if len(page) == 0 {
				break
			}
			for _, d := range page {
				el.deliver(ctx, d)
				n++
			}
		}
	}
	return n, nil
}

// claim leases a page of the endpoint's due rows and reads their subjects in two statements.
func (el *endpointLoop) claim(ctx context.Context, want int) ([]*delivery, bool, error) {
	st := el.w.cfg.Store
	claims, err := st.ClaimEvents(ctx, el.ep.ID, el.w.cfg.Clock.Now(), want, el.lease)
	if err != nil || len(claims) == 0 {
		return nil, false, err
	}
	var msgIDs, inboxIDs []string
	for _, c := range claims {
		switch c.Type {
		case engine.EventInboxReceived:
			inboxIDs = append(inboxIDs, c.Subject)
		case engine.EventMessageStatus:
			msgIDs = append(msgIDs, c.Subject)
		}
	}
	// The claim stands even when the reads fail: the rows go out as failed attempts, retried.
	msgs, merr := st.EventMessages(ctx, msgIDs)
	entries, ierr := st.EventInboxEntries(ctx, inboxIDs)
	if err := errors.Join(merr, ierr); err != nil {
		el.w.log.Warn("reading the subjects of events", "endpoint", el.ep.ID, "err", err)
	}
	out := make([]*delivery, len(claims))
	for i, c := range claims {
		d := &delivery{claim: c}
		switch c.Type {
		case engine.EventInboxReceived:
			d.entry = entries[c.Subject]
		case engine.EventMessageStatus:
			d.msg = msgs[c.Subject]
		}
		out[i] = d
	}
	return out, len(claims) == want, nil
}

// renew extends the leases of the held rows.
func (el *endpointLoop) renew(ctx context.Context, held []*delivery, until time.Time) {
	leases := make([]engine.EventLease, len(held))
	for i, d := range held {
		leases[i] = d.claim.Lease
	}
	if err := el.w.cfg.Store.RenewEventLeases(ctx, leases, until); err != nil && !errors.Is(err, engine.ErrLeaseLost) {
		el.w.log.Warn("renewing event leases", "endpoint", el.ep.ID, "err", err)
	}
}
