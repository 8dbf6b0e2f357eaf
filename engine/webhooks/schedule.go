package webhooks

import (
	"time"

	"switchboard/engine/retryafter"
)

// Schedule is the wait after each failed attempt: the first retry 5 s after the first attempt,
// then 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. When the attempt after the last wait fails too, the
// event is failed: eight attempts in all.
var Schedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// MaxRetryAfter caps the wait a Retry-After header can ask for.
const MaxRetryAfter = retryafter.Max

// nextAttempt returns when to try again after attempt n (1 for the first) failed at now, or
// giveUp when n was the last. A Retry-After longer than the schedule's wait is honoured, up to
// MaxRetryAfter.
func nextAttempt(n int, now time.Time, retryAfter time.Duration) (next time.Time, giveUp bool) {
	if n > len(Schedule) {
		return time.Time{}, true
	}
	wait := Schedule[max(n, 1)-1]
	if retryAfter > wait {
		wait = min(retryAfter, MaxRetryAfter)
	}
	return now.Add(wait), false
}
