// Package retryafter reads HTTP Retry-After values, for the gateway answers the http provider
// classifies and for the answers of webhook endpoints. It imports only the standard library, so
// any package may use it.
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Max is the longest wait a Retry-After value may ask for; a longer one is cut to it.
const Max = 24 * time.Hour

// Parse reads a Retry-After value, delay-seconds or an HTTP date, as of now: 0 when it is
// absent, unreadable, not positive or in the past; at most Max.
func Parse(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(Max/time.Second))) * time.Second
	}
	if at, err := http.ParseTime(v); err == nil && at.After(now) {
		return min(at.Sub(now), Max)
	}
	return 0
}

// Seconds is a wait of s seconds (an adapter's retryAfter), at most Max; s must not be negative.
func Seconds(s float64) time.Duration {
	return time.Duration(min(s, Max.Seconds()) * float64(time.Second))
}
