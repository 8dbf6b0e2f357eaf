package admission

import "time"

// Config holds the give-way's knobs. Each is relative, never tuned to one machine: the CPU share
// is the larger of the process's share of the CPUs it may use (GOMAXPROCS) and the whole
// machine's share in use (on Linux), the submissions are those this process accepted.
// docs/operations.md ("Bursts and admission control") explains why each has its default.
type Config struct {
	// Window is how often the CPU time and the submissions are measured; the dispatcher's
	// question in between is answered from the last measurement. Default 10 ms.
	Window time.Duration
	// Saturated is the CPU use, as a share of the CPUs the process may use, from which the CPU
	// counts as saturated. Default 0.9.
	Saturated float64
	// Unsaturated is the CPU use below which a saturated CPU counts as free again. Between the
	// two the CPU keeps the state it had, so that one slack window in a burst does not let
	// whole pages of claims in. Default 0.6.
	Unsaturated float64
	// BurstRate is how many submissions a second, over a window, make a burst. Default 400.
	BurstRate float64
	// After is how long a burst on a saturated CPU must last before the dispatcher gives way.
	// Default 100 ms.
	After time.Duration
	// Grace is how long the pressure must be gone before the burst counts as over: a garbage
	// collection or a slow commit can stall the callers for a window or two mid-burst.
	// Default 50 ms.
	Grace time.Duration
	// Limit is the longest the dispatcher gives way in a row. Default 10 s.
	Limit time.Duration
	// Floor is how many claims the dispatcher may hold while it gives way. Default 1.
	Floor int
	// MachineSpan is the CPU time, summed over the machine's CPUs, over which the machine's
	// share in use is measured: the kernel counts it in ticks of 10 ms a CPU, so one window is
	// too short. Default 200 ms (20 ticks; 100 ms of real time on 2 CPUs).
	MachineSpan time.Duration
}

// DefaultConfig is the give-way serve runs.
func DefaultConfig() Config {
	return Config{
		Window:      10 * time.Millisecond,
		Saturated:   0.9,
		Unsaturated: 0.6,
		BurstRate:   400,
		After:       100 * time.Millisecond,
		Grace:       50 * time.Millisecond,
		Limit:       10 * time.Second,
		Floor:       1,
		MachineSpan: 200 * time.Millisecond,
	}
}

// withDefaults fills each zero (or negative) member with its default.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	return Config{
		Window: orDefault(c.Window, d.Window), Saturated: orDefault(c.Saturated, d.Saturated),
		Unsaturated: orDefault(c.Unsaturated, d.Unsaturated), BurstRate: orDefault(c.BurstRate, d.BurstRate),
		After: orDefault(c.After, d.After), Grace: orDefault(c.Grace, d.Grace),
		Limit: orDefault(c.Limit, d.Limit), Floor: orDefault(c.Floor, d.Floor),
		MachineSpan: orDefault(c.MachineSpan, d.MachineSpan),
	}
}

// orDefault is v when it is positive, else def.
func orDefault[T int | float64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
