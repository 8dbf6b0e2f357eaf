package engine

import (
	"time"

	"switchboard/packages"
)

// Backoff is the delay before attempt n+1 after n transient attempts of a generation on one
// provider (docs/architecture.md, "Outcome rules"): the delay doubles from the initial delay, is capped at
// the maximum, loses up to half of itself to jitter (equal jitter: half fixed, half random by
// r in [0,1)), and is raised to retryAfter when the provider asked for more, never past the cap.
func Backoff(policy packages.RetryPolicy, n int, retryAfter time.Duration, r float64) time.Duration {
	initial := time.Duration(policy.InitialDelaySeconds) * time.Second
	maximum := time.Duration(policy.MaximumDelaySeconds) * time.Second
	if n < 1 {
		n = 1
	}
	d := initial
	for i := 1; i < n && d < maximum; i++ {
		d *= 2
	}
	if d > maximum {
		d = maximum
	}
	if r < 0 {
		r = 0
	} else if r >= 1 {
		r = 0.999999
	}
	half := d / 2
	d = half + time.Duration(float64(d-half)*r)
	if retryAfter > d {
		d = retryAfter
	}
	if d > maximum {
		d = maximum
	}
	return d
}
