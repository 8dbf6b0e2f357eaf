//go:build !unix

package cputime

import "time"

// Process cannot be read on this system: ok is false.
func Process() (time.Duration, bool) { return 0, false }
