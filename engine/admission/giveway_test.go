package admission

import (
	"testing"
	"time"
)

// The knobs the tests run with: the defaults serve runs.
var (
	defaults      = DefaultConfig()
	giveWayWindow = defaults.Window
	giveWayAfter  = defaults.After
	giveWayGrace  = defaults.Grace
	giveWayLimit  = defaults.Limit
	burstStarted  = int(defaults.BurstRate * defaults.Window.Seconds())
)

// fakeMachine stands in for the process's CPU time, its count of submissions and the wall
// clock of a GiveWay.
type fakeMachine struct {
	now       time.Time
	used      time.Duration
	submitted int64
	reads     int // how often the give-way read the CPU time

	// The whole machine (two CPUs): machineLoad is the share of it in use in each window, the
	// process included; unless machineUp, it cannot be read (and the process's share decides
	// alone, as in most tests).
	machineLoad               float64
	machineUp                 bool
	machineBusy, machineTotal time.Duration
	machineReads              int // how often the give-way read the machine
}

// newTestGiveWay is a GiveWay with the default knobs on two CPUs measured by m.
func newTestGiveWay(m *fakeMachine) *GiveWay {
	g := NewGiveWay(Config{}, func() int64 { return m.submitted })
	g.procs = func() int { return 2 }
	g.wall = func() time.Time { return m.now }
	g.cpu = func() (time.Duration, bool) { m.reads++; return m.used, true }
	g.machine = func() (time.Duration, time.Duration, bool) {
		m.machineReads++
		return m.machineBusy, m.machineTotal, m.machineUp
	}
	return g
}

// yieldingGiveWay returns a giveWay that has just begun to give way to a lasting burst.
func yieldingGiveWay(t *testing.T) (*GiveWay, *fakeMachine) {
	t.Helper()
	m := &fakeMachine{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	g := newTestGiveWay(m)
	m.window(g, 1, 10)
	m.press(g)
	if !m.window(g, 1, 10) {
		t.Fatal("a lasting saturated burst should give way")
	}
	return g, m
}

// window moves the fake machine through one measuring window in which the process used share
// of its two CPUs and `started` submissions began, then asks g.
func (m *fakeMachine) window(g *GiveWay, share float64, started int) bool {
	m.now = m.now.Add(giveWayWindow)
	m.used += time.Duration(share * 2 * float64(giveWayWindow))
	m.machineTotal += 2 * giveWayWindow
	m.machineBusy += time.Duration(max(share, m.machineLoad) * 2 * float64(giveWayWindow))
	m.submitted += int64(started)
	return g.yielding()
}

// press runs saturated burst windows until the pressure has lasted giveWayAfter: the next
// such window is the first that gives way.
func (m *fakeMachine) press(g *GiveWay) {
	for range giveWayAfter / giveWayWindow {
		m.window(g, 1, 10)
	}
}

// graceWindows is how many windows without pressure end it: the first window past giveWayGrace.
var graceWindows = int(giveWayGrace/giveWayWindow) + 1

func TestGiveWayOnlyToLastingBurstsOnASaturatedCPU(t *testing.T) {
	t.Parallel()
	m := &fakeMachine{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	g := newTestGiveWay(m)
	type step struct {
		name    string
		share   float64
		started int
		want    bool
	}
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			if got := m.window(g, s.share, s.started); got != s.want {
				t.Fatalf("%s: yielding = %v, want %v", s.name, got, s.want)
			}
		}
	}
	run([]step{
		{"first measurement has no window yet", 1, 10, false},
		{"busy CPU, no submissions: the dispatcher's own load", 1, 0, false},
		{"submissions on an idle CPU (a slow gateway)", 0.3, 50, false},
	})
	for range int(giveWayAfter / giveWayWindow) {
		run([]step{{"a burst on a saturated CPU, not for " + giveWayAfter.String() + " yet", 0.95, 10, false}})
	}
	run([]step{
		{"the burst on a saturated CPU lasted " + giveWayAfter.String(), 0.95, 10, true},
		{"a slack moment within the burst keeps giving way", 0.7, 10, true},
		{"the CPU frees up, but not for " + giveWayGrace.String() + " yet", 0.5, 10, true},
	})
	for range graceWindows - 2 {
		run([]step{{"the CPU is free, within the grace", 0.5, 10, true}})
	}
	run([]step{
		{"the CPU has been free for longer than the grace", 0.5, 10, false},
		{"between the thresholds, a free CPU stays free", 0.8, 10, false},
		{"saturated again: the pressure starts over", 0.92, 10, false},
	})
	m.press(g)
	run([]step{{"pressure that lasted again gives way again", 1, 10, true}})
	for range graceWindows - 1 {
		run([]step{{"too few submissions, within the grace", 1, burstStarted - 1, true}})
	}
	run([]step{{"too few submissions for longer than the grace end the burst", 1, burstStarted - 1, false}})
	// Each give-way lasted from its first yes until the pressure had been gone past the grace:
	// graceWindows+1 windows each.
	if got, want := g.HeldBack(), time.Duration(2*(graceWindows+1))*giveWayWindow; got != want {
		t.Fatalf("HeldBack = %v, want %v (the windows that followed a yes)", got, want)
	}
}

func TestGiveWayMeasuresOncePerWindow(t *testing.T) {
	t.Parallel()
	g, m := yieldingGiveWay(t)
	want := m.reads
	m.used += time.Second // the next question comes within the window: no new measurement
	m.now = m.now.Add(giveWayWindow / 2)
	if !g.yielding() || m.reads != want {
		t.Fatalf("within a window: yielding must come from the last measurement (reads = %d, want %d)", m.reads, want)
	}
}

func TestGiveWayEndsAfterItsLimitUntilTheBurstEnds(t *testing.T) {
	t.Parallel()
	g, m := yieldingGiveWay(t)
	windows := int(giveWayLimit/giveWayWindow) - 1
	for i := range windows {
		if !m.window(g, 1, 10) {
			t.Fatalf("window %d of the first %v: the dispatcher should give way", i, giveWayLimit)
		}
	}
	for i := range 50 {
		if m.window(g, 1, 10) {
			t.Fatalf("window %d after the limit: an overload that lasts is shared, not given way to", i)
		}
	}
	for range graceWindows { // the burst ends
		m.window(g, 0.2, 0)
	}
	m.press(g)
	if !m.window(g, 1, 10) {
		t.Fatal("a new burst after a quiet window should be given way to again")
	}
}

func TestGiveWayFailsOpenWhenTheCPUCannotBeRead(t *testing.T) {
	t.Parallel()
	g, m := yieldingGiveWay(t)
	g.cpu = func() (time.Duration, bool) { return 0, false }
	if m.window(g, 1, 10) {
		t.Fatal("without a CPU reading the dispatcher must not give way")
	}
}

func TestGiveWayCapsClaimsAtItsFloorWhileYielding(t *testing.T) {
	t.Parallel()
	m := &fakeMachine{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	g := newTestGiveWay(m)
	if got := g.ClaimCap(32); got != 32 {
		t.Fatalf("ClaimCap before any burst = %d, want the full 32", got)
	}
	m.press(g)
	if got := g.ClaimCap(32); got != 32 {
		t.Fatalf("ClaimCap before the pressure lasted %v = %d, want 32", giveWayAfter, got)
	}
	m.window(g, 1, 10)
	if got := g.ClaimCap(32); got != defaults.Floor {
		t.Fatalf("ClaimCap in a burst on a saturated CPU = %d, want the floor %d", got, defaults.Floor)
	}
	if got := g.HeldBack(); got != 0 {
		t.Fatalf("HeldBack = %v before a whole window passed", got)
	}
	for range graceWindows {
		m.window(g, 0.1, 0)
	}
	if got := g.ClaimCap(32); got != 32 {
		t.Fatalf("ClaimCap after the burst = %d, want 32", got)
	}
	if got, want := g.HeldBack(), time.Duration(graceWindows)*giveWayWindow; got != want {
		t.Fatalf("HeldBack = %v, want %v: from the first yes until the grace ran out", got, want)
	}
}

func TestGiveWayKnobsChangeItsBehaviour(t *testing.T) {
	t.Parallel()
	m := &fakeMachine{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	// A give-way that starts at once, on any burst of 100 submissions a second, at a floor of 4.
	g := NewGiveWay(Config{After: giveWayWindow, BurstRate: 100, Floor: 4}, func() int64 { return m.submitted })
	g.procs = func() int { return 2 }
	g.wall = func() time.Time { return m.now }
	g.cpu = func() (time.Duration, bool) { return m.used, true }
	m.window(g, 1, 1)
	m.window(g, 1, 1) // pressure begins: one submission a window is 100 a second
	m.window(g, 1, 1) // and has lasted one window
	if got := g.ClaimCap(32); got != 4 {
		t.Fatalf("ClaimCap = %d, want the configured floor 4", got)
	}
	if got := g.ClaimCap(2); got != 2 {
		t.Fatalf("ClaimCap(2) = %d: a floor above full must not raise the cap", got)
	}
}

func TestDefaultConfigFillsZeroKnobs(t *testing.T) {
	t.Parallel()
	if got := (Config{}).withDefaults(); got != DefaultConfig() {
		t.Fatalf("a zero Config gives %+v, want the defaults %+v", got, DefaultConfig())
	}
	c := Config{Window: time.Second, Floor: 3}.withDefaults()
	if c.Window != time.Second || c.Floor != 3 || c.Limit != DefaultConfig().Limit {
		t.Fatalf("set knobs must be kept and unset ones defaulted: %+v", c)
	}
}

func TestGiveWayWhenTheMachineIsSaturatedByOthers(t *testing.T) {
	t.Parallel()
	span := int(defaults.MachineSpan / (2 * giveWayWindow)) // windows in one machine span
	start := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

	// A load generator beside the process: the process uses 60% of its CPUs, the machine 100%.
	m := &fakeMachine{now: start, machineLoad: 1, machineUp: true}
	g := newTestGiveWay(m)
	for range span + 1 { // the first span measures the machine
		if m.window(g, 0.6, 10) {
			t.Fatal("gave way before the machine's first span was measured")
		}
	}
	for range giveWayAfter / giveWayWindow { // the burst lasts, the process never above 60%
		m.window(g, 0.6, 10)
	}
	if !m.window(g, 0.6, 10) {
		t.Fatal("a lasting burst on a machine saturated by others should give way")
	}
	// The others stop: once a span has measured the machine free, the burst is over (after
	// the grace).
	m.machineLoad = 0
	free := false
	for range span + graceWindows + 1 {
		free = !m.window(g, 0.3, 10)
	}
	if !free {
		t.Fatal("still gave way after the machine was free for a span and the grace")
	}

	// Without a burst the machine is not read at all, and the next burst measures it afresh.
	reads := m.machineReads
	m.machineLoad = 1
	for range span + 1 {
		if m.window(g, 0.6, 0) {
			t.Fatal("gave way without submissions")
		}
	}
	if m.machineReads != reads {
		t.Fatalf("read the machine %d times in windows without a burst", m.machineReads-reads)
	}
	for range span {
		if m.window(g, 0.6, 10) {
			t.Fatal("a new burst gave way before its first machine span was measured")
		}
	}

	// A machine that cannot be read leaves the process's own share: 60% is not saturated.
	m = &fakeMachine{now: start, machineLoad: 1}
	g = newTestGiveWay(m)
	for range span + int(giveWayAfter/giveWayWindow) + 5 {
		if m.window(g, 0.6, 10) {
			t.Fatal("gave way on an unreadable machine while the process used 60%")
		}
	}
}
