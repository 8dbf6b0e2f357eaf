package engine

import (
	"runtime"
	"sync"
	"time"
)

// The dispatcher gives way to a burst of submissions: once callers have kept submitting on a
// saturated CPU for giveWayAfter, it holds a single claim (its floor), so that acceptance, whose
// latency callers wait on, gets the CPU; the queue the burst fills drains once it is over.
// Delivery never stops: the floor's claim is sent as usual, and so is every claim held when the
// give-way began.
//
// A moment of pressure shorter than giveWayAfter is not a burst: a few hundred submissions at
// once are accepted in tens of milliseconds, and holding the dispatcher back then would only
// delay their sends (to a slow gateway, sends cost waiting, not CPU). A burst is over once the
// pressure has been gone for giveWayGrace. A give-way lasts at most giveWayLimit in a row: an
// overload that goes on longer is a steady state, not a burst, and acceptance and delivery then
// share the CPU again until the burst is over.
const (
	// giveWayWindow is how often the dispatcher measures the CPU and the submissions.
	giveWayWindow = 10 * time.Millisecond
	// saturatedShare is the CPU use, as a share of GOMAXPROCS, from which the CPU counts as
	// saturated.
	saturatedShare = 0.9
	// unsaturatedShare is the CPU use below which a saturated CPU counts as free again: between
	// the two, the dispatcher keeps doing what it did, so that one slack moment in a burst does
	// not let whole pages of claims in.
	unsaturatedShare = 0.6
	// burstStarted is how many submissions starting within one window make a burst (400 a
	// second at a 10 ms window).
	burstStarted = 4
	// giveWayAfter is how long the pressure must last before the dispatcher gives way.
	giveWayAfter = 100 * time.Millisecond
	// giveWayGrace is how long the pressure must be gone before it counts as over: a collection
	// or a slow commit can stall the callers for a window or two in the middle of a burst.
	giveWayGrace = 50 * time.Millisecond
	// giveWayLimit is the longest the dispatcher gives way in a row.
	giveWayLimit = 10 * time.Second
	// giveWayFloor is how many claims the dispatcher holds at most while it gives way.
	giveWayFloor = 1
)

// giveWay measures, once a window, whether the dispatcher should give way.
type giveWay struct {
	intake *Intake
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
	spent       bool          // the burst outlasted giveWayLimit: no give-way until it ends
	total       time.Duration // time spent giving way, for the metrics
}

func newGiveWay(intake *Intake) *giveWay {
	if intake == nil {
		return nil
	}
	return &giveWay{intake: intake, cpu: ProcessCPU, wall: time.Now,
		procs: func() int { return runtime.GOMAXPROCS(0) }}
}

// yielding reports whether the dispatcher gives way now. It measures at most once a window and
// answers from that measurement in between.
func (g *giveWay) yielding() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.wall()
	dt := now.Sub(g.at)
	if dt < giveWayWindow {
		return g.yield
	}
	used, ok := g.cpu()
	started := g.intake.Started()
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
func (g *giveWay) decide(now time.Time, window, cpu time.Duration, started int64) {
	share := float64(cpu) / (float64(g.procs()) * float64(window))
	g.saturated = share >= saturatedShare || g.saturated && share >= unsaturatedShare
	burst := started >= burstStarted*int64(window/giveWayWindow)
	if g.yield {
		g.total += window
	}
	switch {
	case burst && g.saturated:
		if g.pressed.IsZero() {
			g.pressed = now
		}
		g.lastPressed = now
	case !g.pressed.IsZero() && now.Sub(g.lastPressed) > giveWayGrace:
		g.pressed, g.spent = time.Time{}, false
	}
	lasted := now.Sub(g.pressed)
	if !g.pressed.IsZero() && lasted >= giveWayAfter+giveWayLimit {
		g.spent = true
	}
	g.yield = !g.pressed.IsZero() && !g.spent && lasted >= giveWayAfter
}

// givenWay is the time the dispatcher has spent giving way.
func (g *giveWay) givenWay() time.Duration {
	if g == nil {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}
