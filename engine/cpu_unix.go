//go:build unix

package engine

import (
	"syscall"
	"time"
)

// ProcessCPU is the user and system CPU time this process has used so far, cgo threads
// (SQLite) included; ok is false when the system cannot say. The dispatcher's give-way reads
// it, and the benchmarks report CPU time per operation with it.
func ProcessCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
