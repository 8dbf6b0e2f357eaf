//go:build !unix

package engine

import "time"

// ProcessCPU cannot be read on this system: ok is false, and the dispatcher then never sees
// the CPU as saturated, and never gives way.
func ProcessCPU() (time.Duration, bool) { return 0, false }
