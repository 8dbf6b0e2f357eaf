package auth

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"switchboard/engine"
	"switchboard/packages"
)

// Limiter bounds.
const (
	// defaultMaxBuckets bounds the callers remembered at once.
	defaultMaxBuckets = 100000
	// sweepInterval is how often idle buckets are forgotten.
	sweepInterval = time.Minute
)

// Limiter keeps a token bucket per caller and access profile: it refills at the profile's
// requestsPerMinute and holds at most burst tokens; each request takes one. Time comes from the
// injected clock only. It is safe for concurrent use.
//
// Memory is bounded: a bucket idle long enough to have refilled completely is forgotten (a fresh
// bucket is full, so forgetting it changes nothing), and when more than the bound of callers are
// active at once, arbitrary buckets are forgotten, which hands those callers a fresh burst.
type Limiter struct {
	clock engine.Clock
	max   int

	mu        sync.Mutex
	buckets   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim    *rate.Limiter
	seen   time.Time     // last request
	refill time.Duration // time to refill from empty to full
}

// NewLimiter returns an empty limiter reading time from clock.
func NewLimiter(clock engine.Clock) *Limiter {
	return &Limiter{clock: clock, max: defaultMaxBuckets, buckets: make(map[string]*bucket)}
}

// Allow takes one token from the bucket of caller (see CallerKey) under profile. When the bucket
// is empty it returns a rate-limit.exceeded problem whose RetryAfter is the time until one token
// is back, rounded up to whole seconds and at least one second. A nil profile or one without a
// positive requestsPerMinute and burst (packages.Load refuses those) is service.unavailable.
//
// Buckets are kept per (caller, profile id): a subject that used two clients of different
// profiles has one bucket for each.
func (l *Limiter) Allow(caller string, profile *packages.AccessProfile) error {
	if profile == nil || profile.RequestsPerMinute <= 0 || profile.Burst <= 0 {
		return &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "the access profile has no usable rate limit",
			Err: fmt.Errorf("auth: unusable rate limit for profile %v", profileID(profile))}
	}
	now := l.clock.Now()
	perSecond := rate.Limit(float64(profile.RequestsPerMinute) / 60)
	// The key is built in a stack buffer: a map read through string(key) does not copy it, so
	// only a new bucket pays for its key.
	var buf [256]byte
	key := append(append(append(buf[:0], caller...), 0), profile.ID...)

	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.buckets[string(key)]
	if b == nil {
		l.makeRoomLocked(now)
		b = &bucket{lim: rate.NewLimiter(perSecond, profile.Burst)}
		l.buckets[string(key)] = b
	} else if b.lim.Limit() != perSecond || b.lim.Burst() != profile.Burst {
		b.lim.SetLimitAt(now, perSecond)
		b.lim.SetBurstAt(now, profile.Burst)
	}
	b.seen = now
	b.refill = time.Duration(float64(profile.Burst) / float64(perSecond) * float64(time.Second))
	if b.lim.AllowN(now, 1) {
		return nil
	}
	missing := 1 - b.lim.TokensAt(now)
	wait := time.Duration(missing / float64(perSecond) * float64(time.Second))
	retry := ((wait + time.Second - 1) / time.Second) * time.Second
	if retry < time.Second {
		retry = time.Second
	}
	return &engine.Problem{
		Code:       engine.CodeRateLimitExceeded,
		Detail:     "the caller's request rate limit is exceeded",
		RetryAfter: retry,
	}
}

// makeRoomLocked forgets idle buckets once per sweepInterval, and when the map is full forgets
// idle ones and then arbitrary ones (a tenth of the bound) so the new caller fits.
func (l *Limiter) makeRoomLocked(now time.Time) {
	full := len(l.buckets) >= l.max
	if !full && now.Sub(l.lastSweep) < sweepInterval {
		return
	}
	l.lastSweep = now
	for k, b := range l.buckets {
		if now.Sub(b.seen) >= b.refill {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.max {
		return
	}
	n := l.max/10 + 1
	for k := range l.buckets {
		delete(l.buckets, k)
		if n--; n == 0 {
			return
		}
	}
}

// callers returns how many buckets are remembered.
func (l *Limiter) callers() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

func profileID(p *packages.AccessProfile) string {
	if p == nil {
		return "<nil>"
	}
	return p.ID
}
