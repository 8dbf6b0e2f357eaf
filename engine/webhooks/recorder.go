package webhooks

import (
	"context"
	"errors"
	"time"

	"switchboard/engine"
)

// Outcomes are recorded in batches: a worker hands its attempt's outcome to the endpoint's
// recorder and takes the next row at once, and the recorder writes whatever outcomes are
// waiting in one store request (engine.EventStore.FinishEvents). A worker waiting for each
// outcome's commit would bound an endpoint's rate at its workers divided by the commit latency.
// The rows stay leased until their outcome commits, so none is claimed twice meanwhile; an
// outcome lost in a crash leaves its row to lapse and go again, with its webhook-id.

// maxRecordBatch bounds the outcomes of one store request.
const maxRecordBatch = 256

// finishing is one attempt's outcome on its way to the store.
type finishing struct {
	o         engine.EventOutcome
	outcome   string
	changedAt time.Time
}

// finish records an attempt: through the recorder while Run runs, else at once.
func (el *endpointLoop) finish(ctx context.Context, o engine.EventOutcome, outcome string, changedAt time.Time) {
	f := finishing{o: o, outcome: outcome, changedAt: changedAt}
	if el.finishes != nil {
		el.finishes <- f
		return
	}
	el.write(ctx, []finishing{f})
}

// record writes the outcomes handed to it until the channel closes.
func (el *endpointLoop) record(ctx context.Context) {
	batch := make([]finishing, 0, maxRecordBatch)
	for f := range el.finishes {
		batch = append(batch[:0], f)
	drain:
		for len(batch) < maxRecordBatch {
			select {
			case g, ok := <-el.finishes:
				if !ok {
					break drain
				}
				batch = append(batch, g)
			default:
				break drain
			}
		}
		el.write(ctx, batch)
	}
}

// write records a batch of outcomes and tells the observer about each.
func (el *endpointLoop) write(ctx context.Context, batch []finishing) {
	outcomes := make([]engine.EventOutcome, len(batch))
	for i := range batch {
		outcomes[i] = batch[i].o
	}
	errs, err := el.w.cfg.Store.FinishEvents(ctx, outcomes)
	if err != nil {
		el.w.log.Error("recording event outcomes", "endpoint", el.ep.ID, "outcomes", len(batch), "err", err)
	}
	for i, f := range batch {
		if err == nil && errs[i] != nil {
			if errors.Is(errs[i], engine.ErrLeaseLost) {
				el.w.log.Warn("event lease lost before its outcome was recorded", "endpoint", el.ep.ID, "row", f.o.Lease.ID)
			} else {
				el.w.log.Error("recording an event outcome", "endpoint", el.ep.ID, "row", f.o.Lease.ID, "err", errs[i])
			}
		}
		if el.w.cfg.Observe != nil {
			var lag time.Duration
			if f.outcome == OutcomeDelivered {
				lag = f.o.At.Sub(f.changedAt)
			}
			el.w.cfg.Observe(el.ep.ID, f.outcome, lag)
		}
	}
}
