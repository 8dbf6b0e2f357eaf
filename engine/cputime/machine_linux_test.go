//go:build linux

package cputime

import "testing"

func TestParseStatSumsBusyAndIdleTicks(t *testing.T) {
	t.Parallel()
	stat := "cpu  100 5 20 300 7 1 2 3 50 0\ncpu0 50 2 10 150 3 0 1 1 25 0\nintr 1\n"
	busy, total, ok := parseStat([]byte(stat))
	if !ok {
		t.Fatal("a well-formed /proc/stat was not read")
	}
	// busy: user 100 + nice 5 + system 20 + irq 1 + softirq 2 + steal 3; idle 300 + iowait 7.
	if busy != 131*tick || total != 438*tick {
		t.Fatalf("busy %v, total %v; want %v and %v", busy, total, 131*tick, 438*tick)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8\n", "cpu 1 2 3\n", "cpu 1 2 x 4 5 6 7 8\n", "cpu 1 2 -3 4 5 6 7 8\n"} {
		if _, _, ok := parseStat([]byte(bad)); ok {
			t.Errorf("parseStat(%q) was read", bad)
		}
	}
}

func TestMachineReadsThisMachine(t *testing.T) {
	t.Parallel()
	busy, total, ok := Machine()
	if !ok {
		t.Fatal("/proc/stat was not read")
	}
	if busy <= 0 || total < busy {
		t.Fatalf("busy %v of %v", busy, total)
	}
	sum := 0
	for i := range 20_000_000 { // some CPU work between the two readings
		sum += i % 7
	}
	busy2, total2, _ := Machine()
	if busy2 < busy || total2 < total || sum < 0 || total2-total < busy2-busy {
		t.Fatalf("went from %v/%v to %v/%v", busy, total, busy2, total2)
	}
}
