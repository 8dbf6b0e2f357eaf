package bench

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// benchPoll is how often the benchmark reads the queue figures and the stand-ins' counters.
// Every poll costs the database it measures something (inFlight), and the rates come from each
// message's own times, not from the polls, so polling less often only ends the run up to one
// poll later.
const benchPoll = 500 * time.Millisecond

// inFlight reads how many messages are queued and sending from the bench's own handle on the
// database (read through GET /v1/slo, the polling would be charged to the instances). It
// counts the queue's index entries only: a count of every dispatch state reads the whole
// messages table (17 ms a poll on PostgreSQL at 20,000 messages, 6% of the database's CPU in
// a run, all charged to the stack it measures).
func (e *benchEnv) inFlight(ctx context.Context) (int64, error) {
	queued, sending, err := e.stack.Store.InFlight(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the queue figures: %w", err)
	}
	return queued + sending, nil
}

// settled reports whether the queue is empty and every message a mock gateway took has had its
// receipt posted (or given up): past this point only the final read is left.
func (e *benchEnv) settled(inFlight int64) bool {
	if inFlight > 0 {
		return false
	}
	for _, gw := range e.stack.Gateways {
		s := gw.Stats()
		if s.ReceiptsPosted+s.ReceiptsFailed < s.Unique {
			return false
		}
	}
	return true
}

// waitSettled polls until the load is over and settled, or until timeout after the load
// ended; it calls onPoll with the number of accepted messages no longer queued or sending, and
// returns the deadline it used (the load's end plus timeout).
func (e *benchEnv) waitSettled(ctx context.Context, loadDone <-chan struct{}, accepted *atomic.Int64, timeout time.Duration, onPoll func(done int64)) (time.Time, error) {
	tick := time.NewTicker(benchPoll)
	defer tick.Stop()
	var deadline time.Time
	for {
		select {
		case <-ctx.Done():
			return deadline, ctx.Err()
		case <-loadDone:
			deadline, loadDone = time.Now().Add(timeout), nil
		case <-tick.C:
			if err := e.database.observe(ctx); err != nil {
				return deadline, err
			}
			d, err := e.inFlight(ctx)
			if err != nil {
				return deadline, err
			}
			onPoll(max(0, accepted.Load()-d))
			if !deadline.IsZero() && (e.settled(d) || time.Now().After(deadline)) {
				return deadline, nil
			}
		}
	}
}

// messageView is the part of the message view the benchmark reads.
type messageView struct {
	Status     string    `json:"status"`
	AcceptedAt time.Time `json:"acceptedAt"`
	UpdatedAt  time.Time `json:"updatedAt"`
}

// readFinal reads every accepted message once; messages not yet final are read again every
// poll until the deadline, or until two more rounds after the stack settled found nothing new
// (a receipt the gateway gave up on will never come). It fills Status, AcceptedAt and UpdatedAt.
func (e *benchEnv) readFinal(ctx context.Context, samples []benchSample, readers int, deadline time.Time) error {
	graceRounds := 0
	pending := make([]int, 0, len(samples))
	for i, s := range samples {
		if s.ID != "" {
			pending = append(pending, i)
		}
	}
	for {
		var next atomic.Int64
		var wg sync.WaitGroup
		for range readers {
			wg.Go(func() {
				for {
					k := int(next.Add(1) - 1)
					if k >= len(pending) {
						return
					}
					s := &samples[pending[k]]
					var v messageView
					code, err := e.getJSON(ctx, "/v1/messages/"+s.ID, e.sender, &v)
					if err == nil && code != http.StatusOK {
						err = fmt.Errorf("status %d", code)
					}
					if err != nil {
						continue // read again in the next round, until the deadline
					}
					s.Status, s.AcceptedAt, s.UpdatedAt = v.Status, v.AcceptedAt, v.UpdatedAt
				}
			})
		}
		wg.Wait()
		if ctx.Err() != nil {
			return fmt.Errorf("final read: %w", ctx.Err())
		}
		still := pending[:0]
		for _, i := range pending {
			if !finalStatus(samples[i].Channel, samples[i].Status) {
				still = append(still, i)
			}
		}
		pending = still
		if len(pending) == 0 || time.Now().After(deadline) {
			return nil
		}
		if d, err := e.inFlight(ctx); err == nil && e.settled(d) {
			if graceRounds++; graceRounds > 2 {
				return nil
			}
		}
		if !sleepUntil(ctx, time.Now().Add(benchPoll)) {
			return ctx.Err()
		}
	}
}

// receiptsFailed counts the signed receipts the mock gateways gave up posting (for example
// after a 429 from the callback route's rate limit): each one leaves a message short of final.
func (e *benchEnv) receiptsFailed() int {
	n := 0
	for _, gw := range e.stack.Gateways {
		n += gw.Stats().ReceiptsFailed
	}
	return n
}

// duplicates counts the references a stand-in took more than once: the mock gateways, the
// SMTP sink (per Message-ID) and the companion peer's inbox (per message id).
func (e *benchEnv) duplicates(ctx context.Context) (int, error) {
	n := 0
	for _, gw := range e.stack.Gateways {
		n += gw.Stats().Duplicates
	}
	if e.stack.Sink != nil {
		n += e.stack.Sink.Stats().Duplicates
	}
	if e.stack.CompanionInbox != nil {
		seen := map[string]int{}
		after := ""
		for {
			entries, cursor, err := e.stack.CompanionInbox.ListInbox(ctx, after, 1000)
			if err != nil {
				return n, fmt.Errorf("read the companion's inbox: %w", err)
			}
			for _, en := range entries {
				seen[en.MessageID]++
				if seen[en.MessageID] == 2 {
					n++
				}
			}
			if len(entries) == 0 || cursor == "" || cursor == after {
				break
			}
			after = cursor
		}
	}
	return n, nil
}
