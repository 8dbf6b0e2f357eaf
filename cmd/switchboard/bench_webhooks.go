package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"switchboard/engine"
	"switchboard/engine/stdwebhook"
	"switchboard/engine/webhooks/receiver"
)

// `switchboard bench --webhooks`: one local endpoint subscribed to message.status of every
// access profile, checking every signature; the run waits for the outbox to drain and reports
// eventsPerSecond (distinct events received over the time from the first submission to the last
// event) and eventLagP99Ms (change written to event received).

// benchEvents is what --webhooks measured.
type benchEvents struct {
	EventsPerSecond *float64 `json:"eventsPerSecond,omitempty"`
	EventLagP99Ms   *float64 `json:"eventLagP99Ms,omitempty"`
	EventLagP50Ms   *float64 `json:"eventLagP50Ms,omitempty"`
	Events          int      `json:"events,omitempty"`
	EventDuplicates int      `json:"eventDuplicates,omitempty"`
	EventsRefused   int      `json:"eventsRefused,omitempty"`
	EventsPending   int64    `json:"eventsPending,omitempty"`
}

// startBenchReceiver starts the endpoint and records it in session, for writeDevRuntime.
func startBenchReceiver(l devPaths, session *devSession) (*receiver.Receiver, error) {
	secret, err := os.ReadFile(filepath.Join(l.secrets, devWebhookSecret))
	if err != nil {
		return nil, environment("bench.unwritable", l.secrets, err)
	}
	key, ok := stdwebhook.DecodeSecret(string(secret))
	if !ok {
		return nil, refused("bench.invalid", devWebhookSecret, "not a whsec_ secret")
	}
	rc := receiver.New(receiver.Options{Key: key, KeepLags: true, Keep: 1})
	url, err := rc.Start("127.0.0.1:0")
	if err != nil {
		return nil, environment("listener.failed", "webhook receiver", err)
	}
	session.WebhookReceiver = &devReceiver{URL: url, Events: url + "events", Endpoint: devWebhookEndpoint}
	session.webhookEvents = []string{engine.EventMessageStatus}
	return rc, nil
}

// drainEvents waits until the endpoint has no pending event, or until deadline.
func (e *benchEnv) drainEvents(ctx context.Context, deadline time.Time) (int64, error) {
	for {
		pending, err := e.stack.store.PendingEvents(ctx)
		if err != nil {
			return 0, err
		}
		n := pending[devWebhookEndpoint]
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

// eventFigures summarizes what the receiver took since start.
func eventFigures(rc *receiver.Receiver, start time.Time, pending int64) benchEvents {
	st := rc.Stats()
	f := benchEvents{Events: st.Distinct, EventDuplicates: st.Duplicates, EventsRefused: st.Refused, EventsPending: pending}
	if st.Distinct > 0 && st.Last.After(start) {
		eps := math.Round(float64(st.Distinct)/st.Last.Sub(start).Seconds()*10) / 10
		p99, p50 := percentileMs(st.Lags, 99), percentileMs(st.Lags, 50)
		f.EventsPerSecond, f.EventLagP99Ms, f.EventLagP50Ms = &eps, &p99, &p50
	}
	return f
}

// printEvents writes the --webhooks lines of the human table.
func (a *app) printEvents(f benchEvents) {
	if f.EventsPerSecond == nil {
		fmt.Fprintf(a.stdout, "events\tnone received (%d refused, %d pending)\n", f.EventsRefused, f.EventsPending)
		return
	}
	fmt.Fprintf(a.stdout, "events\t%d at %.1f/s, lag p50 %.1f ms, p99 %.1f ms; %d duplicates, %d refused, %d pending\n",
		f.Events, *f.EventsPerSecond, *f.EventLagP50Ms, *f.EventLagP99Ms, f.EventDuplicates, f.EventsRefused, f.EventsPending)
}
