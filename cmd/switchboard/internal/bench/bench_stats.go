package bench

import (
	"math"
	"slices"
	"time"
)

// benchSample is one submitted message as the benchmark saw it.
type benchSample struct {
	// Index is the message's position in the run (0..N-1); it also names its Idempotency-Key.
	Index   int
	Channel string
	// Start is when the request was due: the send time in a closed loop, the scheduled time in
	// an open loop (so that a stalled server cannot hide its queueing delay).
	Start time.Time
	// Taken is how long after Start a caller of an open loop took the submission up, 0 when
	// one was free before it was due; Late is how long after Start it went out. Both are 0 in
	// a burst.
	Taken, Late time.Duration
	// Accept is the time from Start to the 202 (or to the refusal).
	Accept time.Duration
	// HTTPStatus is the submission's status code (0 when the request failed in transport).
	HTTPStatus int
	// ID is the accepted message's id ("" unless HTTPStatus is 202).
	ID string
	// Status is the message view's status at the final read ("" when not read).
	Status string
	// AcceptedAt and UpdatedAt come from the final read of the message view (server clock).
	AcceptedAt, UpdatedAt time.Time
}

// final reports whether a status ends the message's journey for the benchmark: delivered,
// failed and unknown always; submitted for email, which never hears back from SMTP.
func finalStatus(channel, status string) bool {
	switch status {
	case "delivered", "failed", "unknown", "cancelled", "expired":
		return true
	case "submitted":
		return channel == "email"
	}
	return false
}

// endToEnd is the accept-to-final latency of a sample read as final, from the server's clock.
func (s benchSample) endToEnd() time.Duration { return s.UpdatedAt.Sub(s.AcceptedAt) }

// percentileMs returns the p-th percentile (0 < p <= 100, nearest rank) of durations in
// milliseconds, or 0 for no samples. It sorts ds in place.
func percentileMs(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	rank := int(math.Ceil(p / 100 * float64(len(ds))))
	rank = min(max(rank, 1), len(ds))
	return roundMs(ds[rank-1])
}

// roundMs converts a duration to milliseconds with three decimals.
func roundMs(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Microsecond)) / 1000
}

// perSecond is n over d, rounded to one decimal; 0 when d is not positive.
func perSecond(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return math.Round(float64(n)/d.Seconds()*10) / 10
}

// PeakRSSBytes reads the process's peak resident set size (VmHWM in /proc/self/status), in
// bytes; 0 where /proc is not available.
func PeakRSSBytes() int64 { return statusKiB("/proc/self/status", "VmHWM:") << 10 }

// summarize turns the samples of a run, read back as final, into its result.
func summarize(cfg Config, samples []benchSample, start time.Time, duplicates int, rss int64) Result {
	r := Result{
		Channel: cfg.Channel, Callers: cfg.Callers, Concurrency: cfg.Concurrency, Rate: cfg.Rate, Admission: cfg.admission(),
		GatewayLatencyMs: roundMs(cfg.GatewayLatency), Requested: cfg.Messages,
		Duplicates: duplicates, PeakRSSBytes: rss,
	}
	accepts := make([]time.Duration, 0, len(samples))
	ends := make([]time.Duration, 0, len(samples))
	var lastAccept, lastFinal time.Time
	// The completion of the run, on the server's clock: from the first acceptance to the last
	// final state, delivered or failed.
	var firstAccepted, lastDone time.Time
	for _, s := range samples {
		if s.ID == "" {
			r.Refused++
			continue
		}
		r.Messages++
		accepts = append(accepts, s.Accept)
		if end := s.Start.Add(s.Accept); end.After(lastAccept) {
			lastAccept = end
		}
		if !s.AcceptedAt.IsZero() && (firstAccepted.IsZero() || s.AcceptedAt.Before(firstAccepted)) {
			firstAccepted = s.AcceptedAt
		}
		if finalStatus(s.Channel, s.Status) && s.UpdatedAt.After(lastDone) {
			lastDone = s.UpdatedAt
		}
		switch {
		case !finalStatus(s.Channel, s.Status):
			r.Lost++
		case s.Status == "delivered" || s.Status == "submitted":
			r.Delivered++
			ends = append(ends, s.endToEnd())
			if s.UpdatedAt.After(lastFinal) {
				lastFinal = s.UpdatedAt
			}
		default:
			r.Failed++
		}
	}
	r.AcceptedPerSecond = perSecond(r.Messages, lastAccept.Sub(start))
	r.DeliveredPerSecond = perSecond(r.Delivered, lastFinal.Sub(start))
	r.AcceptP50Ms, r.AcceptP99Ms = percentileMs(accepts, 50), percentileMs(accepts, 99)
	r.EndToEndP50Ms, r.EndToEndP99Ms = percentileMs(ends, 50), percentileMs(ends, 99)
	last := lastAccept
	if lastFinal.After(last) {
		last = lastFinal
	}
	if last.After(start) {
		r.DurationSeconds = math.Round(last.Sub(start).Seconds()*100) / 100
	}
	if !firstAccepted.IsZero() && lastDone.After(firstAccepted) {
		r.CompletionSeconds = math.Round(lastDone.Sub(firstAccepted).Seconds()*1000) / 1000
	}
	if cfg.OpenLoop() {
		r.OpenLoopFigures = openLoopFigures(cfg, samples)
	}
	r.OK = r.Lost == 0 && r.Duplicates == 0 && r.Refused == 0 && r.Failed == 0
	return r
}
