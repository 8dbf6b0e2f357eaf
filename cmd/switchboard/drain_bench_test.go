package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"switchboard/cmd/switchboard/internal/bench"
	"switchboard/engine"
)

// BenchmarkDispatchDrain fills the queue with b.N SMS (outside the timer), then lets the real
// dispatcher drain it through the quickstart's JavaScript adapter to the zero-latency mock
// gateway over loopback HTTP, and reports messages dispatched per second and the process's peak
// RSS. Run the figure with:
//
//	go test -run '^$' -bench BenchmarkDispatchDrain -benchtime 100000x ./cmd/switchboard/
func BenchmarkDispatchDrain(b *testing.B) {
	for _, workers := range []int{8, 32, 64} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) { benchmarkDrain(b, workers) })
	}
}

func benchmarkDrain(b *testing.B, workers int) {
	e := newAPIEnv(b, envOptions{concurrency: workers})
	ctx := context.Background()
	now := e.clock.Now()
	pending := make([]engine.Acceptance, 0, 500)
	flush := func() {
		for _, r := range e.stack.store.Accept(ctx, pending) {
			if r.Err != nil {
				b.Fatal(r.Err)
			}
		}
		pending = pending[:0]
	}
	for i := 0; i < b.N; i++ {
		id := fmt.Sprintf("0193bench-%08d", i)
		pending = append(pending, engine.Acceptance{
			Idempotency: engine.IdempotencyRecord{Issuer: "bench", Subject: "bench", Key: id, RequestHash: []byte{1},
				Response: []byte(`{}`), ExpiresAt: now.Add(time.Hour)},
			Message: engine.Message{ID: id, Dispatch: engine.DispatchQueued, Report: engine.ReportNone, Channel: engine.ChannelSMS,
				SenderProfile: "reminders-sms", Provider: "sms-gateway", RecipientKind: "phone", AccessProfile: "case-notices",
				AcceptedAt: now, UpdatedAt: now, NextAttemptAt: now, ExpiresAt: now.Add(time.Hour), Generation: 1, PayloadBytes: 120},
			Payload: engine.Payload{Recipient: testPhone, Parts: map[string]string{"text": "Riverside Clinic: reminder of your appointment on October 1, 2026 at 09:30."}},
			Audit:   engine.AuditEntry{Event: "message.accepted", Actor: "bench", MessageID: id, At: now},
		})
		if len(pending) == cap(pending) {
			flush()
		}
	}
	flush()
	// The stack's clock is a fake one: bring it to real time (the prefill took a while) and keep
	// it there, since the sends' deadlines, made from lease expiries, meet real timers.
	e.clock.Set(time.Now())
	b.ResetTimer()
	start := time.Now()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = e.stack.dispatcher.Run(runCtx) }()
	for {
		st, err := e.stack.store.Stats(ctx, e.clock.Now())
		if err != nil {
			b.Fatal(err)
		}
		if st.Dispatch[engine.DispatchQueued] == 0 && st.Dispatch[engine.DispatchSending] == 0 {
			break
		}
		// Stats aggregates over every message: poll gently, or the poll itself slows the drain.
		time.Sleep(250 * time.Millisecond)
		e.clock.Set(time.Now())
	}
	elapsed := time.Since(start)
	cancel()
	<-done
	b.StopTimer()
	if got := e.gw.Stats().Unique; got != b.N {
		b.Fatalf("the gateway took %d distinct messages, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "dispatched/s")
	b.ReportMetric(float64(bench.PeakRSSBytes())/(1<<20), "peakRSS-MiB")
}
