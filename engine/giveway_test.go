package engine

import (
	"testing"
	"time"
)

// fakeMachine stands in for the process's CPU time and the wall clock of a giveWay.
type fakeMachine struct {
	now   time.Time
	used  time.Duration
	reads int // how often the give-way read the CPU time
}

// newTestGiveWay is a giveWay on two CPUs measured by m.
func newTestGiveWay(intake *Intake, m *fakeMachine) *giveWay {
	g := newGiveWay(intake)
	g.procs = func() int { return 2 }
	g.wall = func() time.Time { return m.now }
	g.cpu = func() (time.Duration, bool) { m.reads++; return m.used, true }
	return g
}

// yieldingGiveWay returns a giveWay that has just begun to give way to a lasting burst.
func yieldingGiveWay(t *testing.T) (*giveWay, *Intake, *fakeMachine) {
	t.Helper()
	intake := &Intake{}
	m := &fakeMachine{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	g := newTestGiveWay(intake, m)
	m.window(g, intake, 1, 10)
	m.press(g, intake)
	if !m.window(g, intake, 1, 10) {
		t.Fatal("a lasting saturated burst should give way")
	}
	return g, intake, m
}

// window moves the fake machine through one measuring window in which the process used share
// of its two CPUs and `started` submissions began, then asks g.
func (m *fakeMachine) window(g *giveWay, intake *Intake, share float64, started int) bool {
	m.now = m.now.Add(giveWayWindow)
	m.used += time.Duration(share * 2 * float64(giveWayWindow))
	for range started {
		intake.take()
	}
	return g.yielding()
}

// press runs saturated burst windows until the pressure has lasted giveWayAfter: the next
// such window is the first that gives way.
func (m *fakeMachine) press(g *giveWay, intake *Intake) {
	for range giveWayAfter / giveWayWindow {
		m.window(g, intake, 1, 10)
	}
}

// graceWindows is how many windows without pressure end it: the first window past giveWayGrace.
const graceWindows = int(giveWayGrace/giveWayWindow) + 1

func TestGiveWayOnlyToLastingBurstsOnASaturatedCPU(t *testing.T) {
	t.Parallel()
	intake := &Intake{}
	m := &fakeMachine{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	g := newTestGiveWay(intake, m)
	type step struct {
		name    string
		share   float64
		started int
		want    bool
	}
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			if got := m.window(g, intake, s.share, s.started); got != s.want {
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
	m.press(g, intake)
	run([]step{{"pressure that lasted again gives way again", 1, 10, true}})
	for range graceWindows - 1 {
		run([]step{{"too few submissions, within the grace", 1, burstStarted - 1, true}})
	}
	run([]step{{"too few submissions for longer than the grace end the burst", 1, burstStarted - 1, false}})
	// Each give-way lasted from its first yes until the pressure had been gone past the grace:
	// graceWindows+1 windows each.
	if got, want := g.givenWay(), time.Duration(2*(graceWindows+1))*giveWayWindow; got != want {
		t.Fatalf("givenWay = %v, want %v (the windows that followed a yes)", got, want)
	}
}

func TestGiveWayMeasuresOncePerWindow(t *testing.T) {
	t.Parallel()
	g, _, m := yieldingGiveWay(t)
	want := m.reads
	m.used += time.Second // the next question comes within the window: no new measurement
	m.now = m.now.Add(giveWayWindow / 2)
	if !g.yielding() || m.reads != want {
		t.Fatalf("within a window: yielding must come from the last measurement (reads = %d, want %d)", m.reads, want)
	}
}

func TestGiveWayEndsAfterItsLimitUntilTheBurstEnds(t *testing.T) {
	t.Parallel()
	g, intake, m := yieldingGiveWay(t)
	windows := int(giveWayLimit/giveWayWindow) - 1
	for i := range windows {
		if !m.window(g, intake, 1, 10) {
			t.Fatalf("window %d of the first %v: the dispatcher should give way", i, giveWayLimit)
		}
	}
	for i := range 50 {
		if m.window(g, intake, 1, 10) {
			t.Fatalf("window %d after the limit: an overload that lasts is shared, not given way to", i)
		}
	}
	for range graceWindows { // the burst ends
		m.window(g, intake, 0.2, 0)
	}
	m.press(g, intake)
	if !m.window(g, intake, 1, 10) {
		t.Fatal("a new burst after a quiet window should be given way to again")
	}
}

func TestGiveWayFailsOpenWhenTheCPUCannotBeRead(t *testing.T) {
	t.Parallel()
	g, intake, m := yieldingGiveWay(t)
	g.cpu = func() (time.Duration, bool) { return 0, false }
	if m.window(g, intake, 1, 10) {
		t.Fatal("without a CPU reading the dispatcher must not give way")
	}
}

func TestDispatcherHoldsItsFloorWhileGivingWay(t *testing.T) {
	t.Parallel()
	intake := &Intake{}
	d := NewDispatcher(DispatcherConfig{Concurrency: 16, Providers: map[string]Provider{"a": nil, "b": nil}, Intake: intake})
	m := &fakeMachine{now: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)}
	test := newTestGiveWay(intake, m)
	d.giveWay.cpu, d.giveWay.wall, d.giveWay.procs = test.cpu, test.wall, test.procs
	if got := d.claimCap(); got != 32 {
		t.Fatalf("claimCap before any burst = %d, want 32 (16 workers × 2 providers)", got)
	}
	m.press(d.giveWay, intake)
	if got := d.claimCap(); got != 32 {
		t.Fatalf("claimCap before the pressure lasted %v = %d, want 32", giveWayAfter, got)
	}
	m.window(d.giveWay, intake, 1, 10)
	if got := d.claimCap(); got != giveWayFloor {
		t.Fatalf("claimCap in a burst on a saturated CPU = %d, want the floor %d", got, giveWayFloor)
	}
	if got := d.Figures().GivenWay; got != 0 {
		t.Fatalf("GivenWay = %v before a whole window passed", got)
	}
	for range graceWindows {
		m.window(d.giveWay, intake, 0.1, 0)
	}
	if got := d.claimCap(); got != 32 {
		t.Fatalf("claimCap after the burst = %d, want 32", got)
	}
	if got, want := d.Figures().GivenWay, time.Duration(graceWindows)*giveWayWindow; got != want {
		t.Fatalf("GivenWay = %v, want %v: from the first yes until the grace ran out", got, want)
	}
	if NewDispatcher(DispatcherConfig{Concurrency: 4}).giveWay != nil {
		t.Fatal("a dispatcher without an Intake must never give way")
	}
}

func TestIntakeCountsSubmissions(t *testing.T) {
	t.Parallel()
	in := &Intake{}
	in.take()
	in.take()
	if in.Started() != 2 {
		t.Fatalf("started %d, want 2", in.Started())
	}
	var none *Intake
	none.take()
	if none.Started() != 0 {
		t.Fatal("a nil Intake counts nothing")
	}
}
