//go:build !unix

package engine

import "time"

// processCPU cannot be read on this system: the dispatcher then never sees the CPU as
// saturated, and never gives way.
func processCPU() (time.Duration, bool) { return 0, false }
