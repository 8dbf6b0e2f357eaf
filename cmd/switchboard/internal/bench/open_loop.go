package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"time"
)

// The open loop of `switchboard bench --rate N --duration D`: submission i is due at i/N seconds
// after the start, whatever the stack answered before, for N × D submissions. At most --callers
// requests are in flight: when every caller waits for an answer, the due submissions queue in
// the bench and go out as soon as a caller is free, so a slow stack meets a growing queue of
// requests, not a slower rate, and each one's accept latency still counts from when it was due.

// Limits of an open-loop run's flags.
const (
	maxRate             = 1_000_000        // submissions a second
	maxOpenLoopDuration = 24 * time.Hour   // the longest --duration
	maxOpenLoopMessages = 10_000_000       // rate × duration: the samples are kept in memory
	behindSlack         = time.Millisecond // how late a submission may go out and still be on schedule
)

// OpenLoop reports whether the run submits at a fixed rate (--rate and --duration) instead of
// a burst of --messages.
func (c Config) OpenLoop() bool { return c.Rate != 0 || c.Duration != 0 }

// Submissions is how many messages the run submits: --messages in a burst, rate × duration
// (rounded down) in an open loop.
func (c Config) Submissions() int {
	if !c.OpenLoop() {
		return c.Messages
	}
	// The small slack keeps 0.1/s for 30s at 3 messages despite the float's rounding.
	return int(math.Floor(c.Rate*c.Duration.Seconds() + 1e-9))
}

// validateOpenLoop checks --rate and --duration, which go together.
func (c Config) validateOpenLoop() error {
	switch {
	case math.IsNaN(c.Rate) || c.Rate < 0 || c.Rate > maxRate:
		return fmt.Errorf("--rate must be a number of submissions a second above 0 and at most %d", maxRate)
	case c.Duration < 0 || c.Duration > maxOpenLoopDuration:
		return fmt.Errorf("--duration must be above 0 and at most %s", maxOpenLoopDuration)
	case c.Rate == 0 || c.Duration == 0:
		return errors.New("--rate and --duration go together: an open-loop run submits --rate messages a second for --duration; give both, each above 0")
	}
	switch n := c.Submissions(); {
	case n < 1:
		return errors.New("--rate × --duration must make at least one message")
	case n > maxOpenLoopMessages:
		return fmt.Errorf("--rate × --duration makes %d messages, more than the %d a run holds", n, maxOpenLoopMessages)
	}
	return nil
}

// dueAt is when submission i of an open loop at rate is due, after the start.
func dueAt(i int, rate float64) time.Duration {
	return time.Duration(float64(i) / rate * float64(time.Second))
}

// OpenLoopFigures is what an open-loop run measured beside the figures of every run; every
// member is absent from a burst's result.
type OpenLoopFigures struct {
	// OpenLoopSeconds is the run's --duration.
	OpenLoopSeconds *float64 `json:"openLoopSeconds,omitempty"`
	// BehindSchedule counts the submissions that went out more than behindSlack after they were
	// due, BehindScheduleMaxMs is the latest one's delay, and CallersBusy counts those among
	// them that were late because every caller was still waiting for an answer when they were
	// due (the others were late because the bench's process did not get the CPU in time).
	BehindSchedule      *int     `json:"behindSchedule,omitempty"`
	BehindScheduleMaxMs *float64 `json:"behindScheduleMaxMs,omitempty"`
	CallersBusy         *int     `json:"callersBusy,omitempty"`
	// DeliveryLagP50Ms and DeliveryLagP99Ms are percentiles of the time from acceptance to the
	// final state (delivered or failed), per message, on the server's clock.
	DeliveryLagP50Ms *float64 `json:"deliveryLagP50Ms,omitempty"`
	DeliveryLagP99Ms *float64 `json:"deliveryLagP99Ms,omitempty"`
}

// openLoopFigures summarizes the samples of an open-loop run of cfg.
func openLoopFigures(cfg Config, samples []benchSample) OpenLoopFigures {
	behind, busy, latest := 0, 0, time.Duration(0)
	lags := make([]time.Duration, 0, len(samples))
	for _, s := range samples {
		if s.Late > behindSlack {
			behind++
			latest = max(latest, s.Late)
			if s.Taken > behindSlack {
				busy++
			}
		}
		if s.ID != "" && finalStatus(s.Channel, s.Status) {
			lags = append(lags, s.endToEnd())
		}
	}
	seconds, latestMs := cfg.Duration.Seconds(), roundMs(latest)
	p50, p99 := percentileMs(lags, 50), percentileMs(lags, 99)
	return OpenLoopFigures{OpenLoopSeconds: &seconds, BehindSchedule: &behind, BehindScheduleMaxMs: &latestMs,
		CallersBusy: &busy, DeliveryLagP50Ms: &p50, DeliveryLagP99Ms: &p99}
}

// writeLines writes the open loop's lines of the human table; submitted is the run's count.
func (f OpenLoopFigures) writeLines(w io.Writer, submitted int) {
	fmt.Fprintf(w, "schedule\t%d of %d submission(s) more than %v late, at most %.1f ms; %d of them because every caller was waiting for an answer\n",
		*f.BehindSchedule, submitted, behindSlack, *f.BehindScheduleMaxMs, *f.CallersBusy)
	fmt.Fprintf(w, "delivery lag\tp50 %.1f ms, p99 %.1f ms (acceptance to final state)\n", *f.DeliveryLagP50Ms, *f.DeliveryLagP99Ms)
}
