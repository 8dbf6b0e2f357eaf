//go:build !linux

package cputime

import "time"

// Machine cannot be read on this system: ok is false.
func Machine() (busy, total time.Duration, ok bool) { return 0, 0, false }
