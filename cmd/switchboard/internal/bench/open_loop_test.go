package bench

import (
	"testing"
	"time"
)

// TestBenchCompletionSpansFirstAcceptanceToLastFinalState summarizes a burst read back on the
// server's clock: the completion runs from the earliest acceptance to the latest final state,
// a failure included, and a burst carries no open-loop member.
func TestBenchCompletionSpansFirstAcceptanceToLastFinalState(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	samples := []benchSample{
		{ID: "a", Channel: "sms", Start: t0, Accept: time.Millisecond, Status: "delivered",
			AcceptedAt: t0.Add(2 * time.Millisecond), UpdatedAt: t0.Add(900 * time.Millisecond)},
		{ID: "b", Channel: "sms", Start: t0, Accept: time.Millisecond, Status: "failed",
			AcceptedAt: t0.Add(time.Millisecond), UpdatedAt: t0.Add(1500 * time.Millisecond)},
		{Channel: "sms", Start: t0, HTTPStatus: 429}, // refused: never accepted
	}
	r := summarize(Config{Channel: "sms", Messages: 3}, samples, t0, 0, 0)
	if r.CompletionSeconds != 1.499 {
		t.Fatalf("completionSeconds %v, want 1.499 (first acceptance at 1 ms, the failure final at 1500 ms)", r.CompletionSeconds)
	}
	if r.OpenLoopSeconds != nil || r.DeliveryLagP50Ms != nil || r.BehindSchedule != nil {
		t.Fatalf("a burst reports open-loop members: %+v", r.OpenLoopFigures)
	}
}

// TestBenchOpenLoopFigures counts the submissions behind schedule, tells those every caller
// was too busy for, and takes the delivery lag over every final message.
func TestBenchOpenLoopFigures(t *testing.T) {
	t.Parallel()
	cfg := Config{Channel: "sms", Rate: 4, Duration: time.Second}
	t0 := time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC)
	final := func(lag time.Duration, status string) benchSample {
		return benchSample{ID: "m", Channel: "sms", Status: status, AcceptedAt: t0, UpdatedAt: t0.Add(lag)}
	}
	samples := []benchSample{final(10*time.Millisecond, "delivered"), final(20*time.Millisecond, "delivered"),
		final(30*time.Millisecond, "failed"), final(40*time.Millisecond, "sending")}
	samples[1].Late = 500 * time.Microsecond                                   // within the slack: on schedule
	samples[2].Taken, samples[2].Late = 7*time.Millisecond, 8*time.Millisecond // every caller was busy
	samples[3].Late = 3 * time.Millisecond                                     // the bench's process was late
	f := openLoopFigures(cfg, samples)
	if *f.OpenLoopSeconds != 1 || *f.BehindSchedule != 2 || *f.CallersBusy != 1 || *f.BehindScheduleMaxMs != 8 {
		t.Fatalf("seconds %v, behind %d, callers busy %d, latest %v ms; want 1, 2, 1, 8",
			*f.OpenLoopSeconds, *f.BehindSchedule, *f.CallersBusy, *f.BehindScheduleMaxMs)
	}
	if *f.DeliveryLagP50Ms != 20 || *f.DeliveryLagP99Ms != 30 {
		t.Fatalf("delivery lag p50 %v ms, p99 %v ms; want 20 and 30 (the three final messages)", *f.DeliveryLagP50Ms, *f.DeliveryLagP99Ms)
	}
}

// TestBenchOpenLoopSubmissions is rate × duration, rounded down, in an open loop and --messages
// in a burst; the schedule spaces the submissions 1/rate apart.
func TestBenchOpenLoopSubmissions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg  Config
		want int
	}{
		{Config{Rate: 200, Duration: 2 * time.Second}, 400},
		{Config{Rate: 0.1, Duration: 30 * time.Second}, 3},
		{Config{Rate: 3, Duration: 1500 * time.Millisecond}, 4},
		{Config{Messages: 7}, 7},
	} {
		if got := tc.cfg.Submissions(); got != tc.want {
			t.Errorf("%+v: %d submissions, want %d", tc.cfg, got, tc.want)
		}
	}
	if got := dueAt(300, 200); got != 1500*time.Millisecond {
		t.Errorf("submission 300 at 200/s is due at %v, want 1.5s", got)
	}
}
