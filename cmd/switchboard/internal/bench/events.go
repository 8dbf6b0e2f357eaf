package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"time"

	"switchboard/engine/webhooks/receiver"
)

// `switchboard bench --webhooks`: one local endpoint subscribed to message.status of every
// access profile, checking every signature. The run waits for the outbox to drain and reports
// eventsPerSecond (distinct events received over the time from the first submission to the last
// event), eventLagP99Ms (change written to event received) and serveCpuUsPerEvent (the serve
// processes' CPU until the outbox drained, per event); docs/benchmarks.md.

// Events is what a run with --webhooks measured.
type Events struct {
	EventsPerSecond *float64 `json:"eventsPerSecond,omitempty"`
	EventLagP99Ms   *float64 `json:"eventLagP99Ms,omitempty"`
	EventLagP50Ms   *float64 `json:"eventLagP50Ms,omitempty"`
	Received        int      `json:"events,omitempty"`
	EventDuplicates int      `json:"eventDuplicates,omitempty"`
	EventsRefused   int      `json:"eventsRefused,omitempty"`
	EventsPending   int64    `json:"eventsPending,omitempty"`
	// ServeCPUUsPerEvent is the serve processes' CPU time from the first submission until the
	// outbox drained, per distinct event received: the messages' work included (subtract a run
	// without --webhooks for the events' own cost, docs/benchmarks.md).
	ServeCPUUsPerEvent *float64 `json:"serveCpuUsPerEvent,omitempty"`
}

// drainEvents waits until the bench's endpoint has no pending event, or until deadline, and
// returns how many are still pending.
func (e *benchEnv) drainEvents(ctx context.Context, deadline time.Time) (int64, error) {
	for {
		pending, err := e.stack.Store.PendingEvents(ctx)
		if err != nil {
			return 0, fmt.Errorf("read pending events: %w", err)
		}
		n := pending[e.stack.EventEndpoint]
		if n == 0 || time.Now().After(deadline) {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// eventFigures summarizes what the receiver took since begin; serveCPU is the serve processes'
// CPU time from begin until the outbox drained.
func eventFigures(rc *receiver.Receiver, begin time.Time, pending int64, serveCPU time.Duration) Events {
	st := rc.Stats()
	f := Events{Received: st.Distinct, EventDuplicates: st.Duplicates, EventsRefused: st.Refused, EventsPending: pending}
	if st.Distinct > 0 && st.Last.After(begin) {
		eps := math.Round(float64(st.Distinct)/st.Last.Sub(begin).Seconds()*10) / 10
		p99, p50 := percentileMs(st.Lags, 99), percentileMs(st.Lags, 50)
		perEvent := perMessageUs(serveCPU, st.Distinct)
		f.EventsPerSecond, f.EventLagP99Ms, f.EventLagP50Ms, f.ServeCPUUsPerEvent = &eps, &p99, &p50, &perEvent
	}
	return f
}

// writeLine writes the events line of the human table.
func (f Events) writeLine(w io.Writer) {
	if f.EventsPerSecond == nil {
		fmt.Fprintf(w, "events\tnone received (%d refused, %d pending)\n", f.EventsRefused, f.EventsPending)
		return
	}
	fmt.Fprintf(w, "events\t%d at %.1f/s, lag p50 %.1f ms, p99 %.1f ms; %d duplicates, %d refused, %d pending; serve CPU %.1f µs per event\n",
		f.Received, *f.EventsPerSecond, *f.EventLagP50Ms, *f.EventLagP99Ms, f.EventDuplicates, f.EventsRefused, f.EventsPending, *f.ServeCPUUsPerEvent)
}
