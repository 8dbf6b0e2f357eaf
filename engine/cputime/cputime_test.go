package cputime

import (
	"runtime"
	"testing"
)

func TestProcessNeverRunsBackwards(t *testing.T) {
	t.Parallel()
	before, ok := Process()
	if !ok {
		if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" {
			t.Skip("needs a Unix (getrusage): the process's CPU time cannot be read on " + runtime.GOOS)
		}
		t.Fatalf("Process() cannot read the CPU time on %s", runtime.GOOS)
	}
	sum := 0
	for i := range 5_000_000 { // some CPU work between the two readings
		sum += i % 7
	}
	after, _ := Process()
	if after < before || sum < 0 {
		t.Fatalf("CPU time went from %v to %v", before, after)
	}
}
