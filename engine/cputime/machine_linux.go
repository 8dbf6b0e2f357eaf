//go:build linux

package cputime

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// tick is the kernel's accounting unit in /proc/stat (USER_HZ, 100 a second on every Linux
// architecture Go supports).
const tick = 10 * time.Millisecond

// Machine is the CPU time all of the machine's CPUs have been busy (user, nice, system, irq,
// softirq and steal) and the time they have existed (busy, idle and iowait) since boot, from
// the first line of /proc/stat; ok is false when it cannot be read. busy/total over an interval
// is the share of the machine in use, whoever used it. The figures move in ticks of 10 ms per
// CPU, so a share is only meaningful over many ticks.
func Machine() (busy, total time.Duration, ok bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, false
	}
	return parseStat(b)
}

// parseStat reads the aggregate "cpu" line of a /proc/stat text.
func parseStat(b []byte) (busy, total time.Duration, ok bool) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	fields := bytes.Fields(line)
	// cpu user nice system idle iowait irq softirq steal [guest guest_nice]: guest time is
	// already counted in user and nice.
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return 0, 0, false
	}
	var v [8]int64
	for i := range v {
		n, err := strconv.ParseInt(string(fields[i+1]), 10, 64)
		if err != nil || n < 0 {
			return 0, 0, false
		}
		v[i] = n
	}
	idle := v[3] + v[4]
	used := v[0] + v[1] + v[2] + v[5] + v[6] + v[7]
	return time.Duration(used) * tick, time.Duration(used+idle) * tick, true
}
