package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// CPU time and memory of other processes, read from /proc (Linux): the bench charges the serve
// processes and the database server's processes for the messages of a run, each as the delta
// of its CPU time over the run.

// clockTicks is the unit of the CPU times in /proc/PID/stat (USER_HZ, 100 on Linux).
const clockTicks = 100

// procStat is what the bench reads of one process's /proc/PID/stat.
type procStat struct {
	ppid int
	cpu  time.Duration // user and system time
}

// readProcStat reads /proc/PID/stat; ok is false when the process is gone (or there is no /proc).
func readProcStat(pid int) (procStat, bool) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name (field 2) is in parentheses and may hold spaces: fields count from the
	// last ')'.
	s := string(raw)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[end+1:])
	// f[0] is field 3 (state): ppid is field 4, utime 14, stime 15.
	if len(f) < 13 {
		return procStat{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseInt(f[11], 10, 64)
	stime, err3 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procStat{}, false
	}
	return procStat{ppid: ppid, cpu: time.Duration(utime+stime) * time.Second / clockTicks}, true
}

// processesCPU sums the CPU time of pids that still run.
func processesCPU(pids []int) time.Duration {
	var total time.Duration
	for _, pid := range pids {
		if st, ok := readProcStat(pid); ok {
			total += st.cpu
		}
	}
	return total
}

// processPeakRSS is the greatest peak resident set size (VmHWM) of pids, in bytes.
func processPeakRSS(pids []int) int64 {
	var peak int64
	for _, pid := range pids {
		peak = max(peak, statusKiB("/proc/"+strconv.Itoa(pid)+"/status", "VmHWM:")<<10)
	}
	return peak
}

// statusKiB reads one "Name: N kB" line of a /proc status file; 0 when absent.
func statusKiB(path, name string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name)
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb
	}
	return 0
}

// childrenOf lists the processes whose parent is ppid.
func childrenOf(ppid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("read /proc: %w", err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readProcStat(pid); ok && st.ppid == ppid {
			out = append(out, pid)
		}
	}
	return out, nil
}

// cpuTally follows the CPU time of a changing set of processes over a run: each is charged
// what it used between the first and the last time it was seen, and one first seen after the
// run began is charged from zero (its whole life fell in the run).
type cpuTally struct {
	first, last map[int]time.Duration
	started     bool
}

func newCPUTally() *cpuTally {
	return &cpuTally{first: map[int]time.Duration{}, last: map[int]time.Duration{}}
}

// observe records the current CPU time of pids; the first call marks the start of the run.
func (t *cpuTally) observe(pids []int) {
	for _, pid := range pids {
		st, ok := readProcStat(pid)
		if !ok {
			continue
		}
		if _, seen := t.first[pid]; !seen {
			if t.started {
				t.first[pid] = 0
			} else {
				t.first[pid] = st.cpu
			}
		}
		t.last[pid] = st.cpu
	}
	t.started = true
}

// total is the CPU time the observed processes used over the run.
func (t *cpuTally) total() time.Duration {
	var sum time.Duration
	for pid, last := range t.last {
		sum += last - t.first[pid]
	}
	return sum
}

// loadAverage is the machine's one-minute load average (/proc/loadavg); 0 where unknown.
func loadAverage() float64 {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// databaseCPU charges the CPU time of a PostgreSQL server's processes on this machine to a run:
// its main process, its background processes (WAL writer, checkpointer, background writer,
// autovacuum) and the backends of the serve processes' connections, not the backends of its
// other clients.
type databaseCPU struct {
	server     *DatabaseServer
	postmaster int // 0 when the server is not on this machine
	mu         sync.Mutex
	tally      *cpuTally
}

func newDatabaseCPU(server *DatabaseServer) *databaseCPU {
	d := &databaseCPU{server: server, tally: newCPUTally()}
	if st, ok := readProcStat(server.AnyBackend); ok && server.AnyBackend > 0 {
		d.postmaster = st.ppid
	}
	return d
}

// local reports whether the server's processes can be measured (they run on this machine).
func (d *databaseCPU) local() bool { return d != nil && d.postmaster > 0 }

// observe records the CPU time of the server's processes that work for the run; it does
// nothing for a nil databaseCPU or a server elsewhere.
func (d *databaseCPU) observe(ctx context.Context) error {
	if !d.local() {
		return nil
	}
	children, err := childrenOf(d.postmaster)
	if err != nil {
		return err
	}
	foreign, err := d.server.Foreign(ctx)
	if err != nil {
		return fmt.Errorf("read the database server's backends: %w", err)
	}
	pids := []int{d.postmaster}
	for _, pid := range children {
		if !foreign[pid] {
			pids = append(pids, pid)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tally.observe(pids)
	return nil
}

// cpu is the server's CPU time charged to the run so far.
func (d *databaseCPU) cpu() time.Duration {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.tally.total()
}
