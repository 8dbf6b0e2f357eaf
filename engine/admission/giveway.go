package admission

import (
	"runtime"
	"sync"
	"time"

	"switchboard/engine"
	"switchboard/engine/cputime"
)

// GiveWay is the admission policy serve runs: the dispatcher gives way to a burst of
// submissions. Once callers have kept submitting on a saturated CPU for Config.After, it holds
// Config.Floor claims, so that acceptance, whose latency callers wait on, gets the CPU; the
// queue the burst fills drains once it is over. Delivery never stops: the floor's claims are
// sent as usual, and so is every claim held when the give-way began.
//
// A moment of pressure shorter than After is not a burst: a few hundred submissions at once are
// accepted in tens of milliseconds, and holding the dispatcher back then would only delay their
// sends (to a slow gateway, sends cost waiting, not CPU). A burst is over once the pressure has
// been gone for Config.Grace. A give-way lasts at most Config.Limit in a row: an overload that
// goes on longer is a steady state, not a burst, and acceptance and delivery then share the CPU
// again until the burst is over. docs/operations.md explains each knob.
type GiveWay struct {
	cfg Config
	// submissions is how many submissions the process has taken so far.
	submissions func() int64
	// cpu reads the CPU time the process has used, and wall reads real time: CPU use is
	// measured against real time, never against the engine's Clock. procs is the CPUs the
	// process may use, read at each measurement: the runtime adjusts GOMAXPROCS when the
	// container's CPU limit changes.
	cpu   func() (time.Duration, bool)
	wall  func() time.Time
	procs func() int

	mu          sync.Mutex
	at          time.Time     // the start of the current window
	used        time.Duration // CPU time used at the start of the window
	started     int64         // submissions started at the start of the window
	saturated   bool
	yield       bool
	pressed     time.Time     // when the current pressure (a burst on a saturated CPU) began
	lastPressed time.Time     // the last window under pressure
	spent       bool          // the burst outlasted Limit: no give-way until it ends
	total       time.Duration // time spent giving way, for the metrics
}

// NewGiveWay returns the give-way policy with cfg's knobs (a zero member takes its default, see
// DefaultConfig). submissions counts the submissions the process has taken so far
// (engine.Intake.Started).
func NewGiveWay(cfg Config, submissions func() int64) *GiveWay {
	return &GiveWay{cfg: cfg.withDefaults(), submissions: submissions, cpu: cputime.Process, wall: time.Now,
		procs: func() int { return runtime.GOMAXPROCS(0) }}
}

// ClaimCap returns full, or the floor while the dispatcher gives way to a burst.
func (g *GiveWay) ClaimCap(full int) int {
	if g.yielding() {
		return min(g.cfg.Floor, full)
	}
	return full
}

// HeldBack is the time the dispatcher has spent giving way.
func (g *GiveWay) HeldBack() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}

// yielding reports whether the dispatcher gives way now. It measures at most once a window and
// answers from that measurement in between.
func (g *GiveWay) yielding() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.wall()
	dt := now.Sub(g.at)
	if dt < g.cfg.Window {
		return g.yield
	}
	used, ok := g.cpu()
	started := g.submissions()
	if !ok {
		g.yield = false
		return false
	}
	if !g.at.IsZero() {
		g.decide(now, dt, used-g.used, started-g.started)
	}
	g.at, g.used, g.started = now, used, started
	return g.yield
}

// decide updates the give-way from one window's figures: its length, the CPU time used in it
// and the submissions started in it.
func (g *GiveWay) decide(now time.Time, window, cpu time.Duration, started int64) {
	c := g.cfg
	share := float64(cpu) / (float64(g.procs()) * float64(window))
	g.saturated = share >= c.Saturated || g.saturated && share >= c.Unsaturated
	burst := float64(started) >= c.BurstRate*window.Seconds()
	if g.yield {
		g.total += window
	}
	switch {
	case burst && g.saturated:
		if g.pressed.IsZero() {
			g.pressed = now
		}
		g.lastPressed = now
	case !g.pressed.IsZero() && now.Sub(g.lastPressed) > c.Grace:
		g.pressed, g.spent = time.Time{}, false
	}
	lasted := now.Sub(g.pressed)
	if !g.pressed.IsZero() && lasted >= c.After+c.Limit {
		g.spent = true
	}
	g.yield = !g.pressed.IsZero() && !g.spent && lasted >= c.After
}

var _ engine.Admission = (*GiveWay)(nil)
