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
	// machine reads how long the machine's CPUs have been busy and have existed, whoever used
	// them: a load generator or a database on the same machine saturates the CPU as surely as
	// the process itself.
	machine func() (busy, total time.Duration, ok bool)

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

	machineBusy, machineTotal time.Duration // the machine's figures at the start of its span
	machineShare              float64       // the machine's share in use over its last span
}

// NewGiveWay returns the give-way policy with cfg's knobs (a zero member takes its default, see
// DefaultConfig). submissions counts the submissions the process has taken so far
// (engine.Intake.Started).
func NewGiveWay(cfg Config, submissions func() int64) *GiveWay {
	return &GiveWay{cfg: cfg.withDefaults(), submissions: submissions, cpu: cputime.Process, wall: time.Now,
		procs: func() int { return runtime.GOMAXPROCS(0) }, machine: cputime.Machine}
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
		burst := float64(started-g.started) >= g.cfg.BurstRate*dt.Seconds()
		g.measureMachine(burst)
		g.decide(now, dt, used-g.used, burst)
	}
	g.at, g.used, g.started = now, used, started
	return g.yield
}

// measureMachine updates the machine's share in use once its CPUs have run for a whole
// Config.MachineSpan since the last update: the kernel counts in ticks of 10 ms, too coarse for
// one window. Only a burst asks how busy the machine is: outside one the machine is not read,
// and the next burst measures it afresh. A machine that cannot be read counts as idle (the
// process's own share still counts).
func (g *GiveWay) measureMachine(burst bool) {
	if !burst {
		g.machineShare, g.machineTotal = 0, 0
		return
	}
	busy, total, ok := g.machine()
	switch {
	case !ok:
		g.machineShare, g.machineTotal = 0, 0
	case g.machineTotal == 0 || total < g.machineTotal:
		g.machineBusy, g.machineTotal = busy, total
	case total-g.machineTotal >= g.cfg.MachineSpan:
		g.machineShare = float64(busy-g.machineBusy) / float64(total-g.machineTotal)
		g.machineBusy, g.machineTotal = busy, total
	}
}

// decide updates the give-way from one window's figures: its length, the CPU time the process
// used in it and whether its submissions came at a burst's rate. The CPU is as busy as the
// larger of the process's share of its CPUs and the machine's last measured share.
func (g *GiveWay) decide(now time.Time, window, cpu time.Duration, burst bool) {
	c := g.cfg
	share := max(float64(cpu)/(float64(g.procs())*float64(window)), g.machineShare)
	g.saturated = share >= c.Saturated || g.saturated && share >= c.Unsaturated
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
