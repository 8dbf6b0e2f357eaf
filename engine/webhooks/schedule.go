package webhooks

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Schedule is the wait after each failed attempt: the first retry 5 s after the first attempt,
// then 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. When the attempt after the last wait fails too, the
// event is failed: eight attempts in all.
var Schedule = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 10 * time.Hour}

// MaxRetryAfter caps the wait a Retry-After header can ask for.
const MaxRetryAfter = 24 * time.Hour

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

// parseRetryAfter reads a Retry-After header: seconds, or an HTTP date (0 when absent or
// unreadable).
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(MaxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
