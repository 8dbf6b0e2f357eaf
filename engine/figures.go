package engine

import (
	"sync"
	"time"
)

// Figures counts what this process did over the last minutes, in fixed buckets, for the
// operator console's rate charts: submissions accepted, and attempts by provider and outcome
// class. It is bounded (Buckets buckets per series, one series per provider and outcome class
// the dispatcher reports) and holds no message id, recipient or content. Counts are this
// process's own: with several instances on one database, each answers for itself. It is safe for
// concurrent use.
type Figures struct {
	mu       sync.Mutex
	clock    Clock
	width    time.Duration
	n        int
	head     int64 // index (Unix time / width) of the newest bucket
	accepted []int64
	attempts map[string]map[OutcomeClass][]int64
}

// FiguresSnapshot is Figures at one moment: each series holds one count per bucket, oldest
// first; the last bucket is the one still filling, which ends at End.
type FiguresSnapshot struct {
	Bucket   time.Duration
	Start    time.Time // start of the oldest bucket
	End      time.Time // end of the newest bucket
	Accepted []int64
	Attempts map[string]map[OutcomeClass][]int64 // provider → outcome class → counts
}

// NewFigures keeps buckets buckets of width each (for example 90 of 10 s: 15 minutes).
func NewFigures(clock Clock, width time.Duration, buckets int) *Figures {
	if width <= 0 {
		width = 10 * time.Second
	}
	if buckets < 1 {
		buckets = 90
	}
	f := &Figures{clock: clock, width: width, n: buckets, accepted: make([]int64, buckets),
		attempts: map[string]map[OutcomeClass][]int64{}}
	f.head = f.index(clock.Now())
	return f
}

func (f *Figures) index(t time.Time) int64 { return t.UnixNano() / int64(f.width) }

// advance moves the ring to now, zeroing the buckets that passed. It runs under mu.
func (f *Figures) advance() int {
	now := f.index(f.clock.Now())
	if now > f.head {
		steps := min(now-f.head, int64(f.n))
		for i := int64(1); i <= steps; i++ {
			slot := int((f.head + i) % int64(f.n))
			f.accepted[slot] = 0
			for _, byClass := range f.attempts {
				for _, s := range byClass {
					s[slot] = 0
				}
			}
		}
		f.head = now
	}
	return int(f.head % int64(f.n))
}

// Accepted counts one accepted submission.
func (f *Figures) Accepted() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.accepted[f.advance()]++
}

// Attempt counts one finished attempt of provider with its outcome class. It has the signature
// of DispatcherConfig.Observe.
func (f *Figures) Attempt(provider string, class OutcomeClass, _ time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	slot := f.advance()
	byClass := f.attempts[provider]
	if byClass == nil {
		byClass = map[OutcomeClass][]int64{}
		f.attempts[provider] = byClass
	}
	s := byClass[class]
	if s == nil {
		s = make([]int64, f.n)
		byClass[class] = s
	}
	s[slot]++
}

// Snapshot returns every series, oldest bucket first.
func (f *Figures) Snapshot() FiguresSnapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.advance()
	ordered := func(ring []int64) []int64 {
		out := make([]int64, f.n)
		for i := range f.n {
			out[i] = ring[int((f.head+1+int64(i))%int64(f.n))]
		}
		return out
	}
	end := time.Unix(0, (f.head+1)*int64(f.width)).UTC()
	snap := FiguresSnapshot{Bucket: f.width, End: end, Start: end.Add(-time.Duration(f.n) * f.width),
		Accepted: ordered(f.accepted), Attempts: map[string]map[OutcomeClass][]int64{}}
	for p, byClass := range f.attempts {
		snap.Attempts[p] = map[OutcomeClass][]int64{}
		for c, s := range byClass {
			snap.Attempts[p][c] = ordered(s)
		}
	}
	return snap
}
