//go:build unix

package cputime

import (
	"syscall"
	"time"
)

// Process is the user and system CPU time this process has used so far, cgo threads (SQLite)
// included; ok is false when the system cannot say.
func Process() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
