package bench

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// The external load of `bench --load wrk`: wrk (a C load generator, another process) makes the
// submissions, so that neither the callers' work nor their goroutines share a Go runtime, or
// a scheduler, with anything the bench measures. Each instance gets one wrk process with its
// share of the connections and messages; bench_wrk.lua gives every submission its own
// Idempotency-Key and writes the message ids it was answered with, which the bench reads back
// as it reads its own callers' samples.

//go:embed bench_wrk.lua
var wrkScript []byte

// wrkConnectionsPerThread is how many connections one wrk thread drives.
const wrkConnectionsPerThread = 64

// wrkLatency is the accept latency wrk measured (its percentiles over every request).
type wrkLatency struct{ p50, p99 float64 }

// loadWrk runs the submissions through wrk and returns one sample per submission: its message
// id (or its refusal), with Start set to the start of the load; the accept times are filled in
// after the final read (wrkAcceptTimes).
func (e *benchEnv) loadWrk(ctx context.Context, cfg Config, bodies map[string][]byte, accepted *atomic.Int64) ([]benchSample, time.Time, error) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return nil, time.Now(), environment("bench.no-wrk", "wrk", errors.New("--load wrk needs wrk on PATH (make bench installs it)"))
	}
	dir := filepath.Join(e.tmp, "wrk")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, time.Now(), environment("bench.unwritable", dir, err)
	}
	script, bodyFile := filepath.Join(dir, "submit.lua"), filepath.Join(dir, "body.json")
	if err := os.WriteFile(script, wrkScript, 0o600); err != nil {
		return nil, time.Now(), environment("bench.unwritable", script, err)
	}
	if err := os.WriteFile(bodyFile, bodies[cfg.Channel], 0o600); err != nil {
		return nil, time.Now(), environment("bench.unwritable", bodyFile, err)
	}
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	apis := e.stack.APIs
	type run struct {
		cmd     *exec.Cmd
		out     bytes.Buffer
		threads int
		prefix  string
	}
	var runs []*run
	start := time.Now()
	first := 0
	for i, api := range apis {
		count := cfg.Messages / len(apis)
		if i < cfg.Messages%len(apis) {
			count++
		}
		conns := max(1, cfg.Callers/len(apis))
		if i < cfg.Callers%len(apis) {
			conns++
		}
		conns = min(conns, max(count, 1))
		threads := min((conns+wrkConnectionsPerThread-1)/wrkConnectionsPerThread, max(count, 1))
		r := &run{threads: threads, prefix: filepath.Join(dir, fmt.Sprintf("instance-%d-thread-", i))}
		r.cmd = exec.CommandContext(ctx, bin, "-t", strconv.Itoa(threads), "-c", strconv.Itoa(conns), "-d", "3600s",
			"--timeout", "60s", "-s", script, "http://"+api, "--",
			e.sender, bodyFile, strconv.Itoa(first), strconv.Itoa(count), "bench-"+runID+"-", r.prefix, strconv.Itoa(threads))
		r.cmd.Stdout, r.cmd.Stderr = &r.out, &r.out
		first += count
		if count == 0 {
			continue
		}
		if err := r.cmd.Start(); err != nil {
			for _, r := range runs {
				_ = r.cmd.Process.Kill()
				_ = r.cmd.Wait()
			}
			return nil, start, environment("bench.no-wrk", bin, err)
		}
		runs = append(runs, r)
	}
	// Every thread writes its file when all its submissions are answered; then wrk, which would
	// otherwise run for its whole duration, is interrupted and prints its figures.
	var samples []benchSample
	e.wrkLatency = wrkLatency{}
	for _, r := range runs {
		for t := range r.threads {
			lines, err := waitWrkFile(ctx, fmt.Sprintf("%s%d.ids", r.prefix, t), r.cmd)
			if err != nil {
				return nil, start, fmt.Errorf("wrk: %w\n%s", err, r.out.String())
			}
			for _, line := range lines {
				s := benchSample{Index: len(samples), Channel: cfg.Channel, Start: start}
				if code, refusedHere := strings.CutPrefix(line, "!"); refusedHere {
					s.HTTPStatus, _ = strconv.Atoi(code)
				} else {
					s.HTTPStatus, s.ID = 202, line
					accepted.Add(1)
				}
				samples = append(samples, s)
			}
		}
		_ = r.cmd.Process.Signal(syscall.SIGINT)
		_ = r.cmd.Wait()
		var figures struct {
			P50Us float64 `json:"p50Us"`
			P99Us float64 `json:"p99Us"`
		}
		sc := bufio.NewScanner(bytes.NewReader(r.out.Bytes()))
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "{") {
				_ = json.Unmarshal([]byte(line), &figures)
			}
		}
		// Several wrk processes: the worst of their percentiles.
		e.wrkLatency.p50 = max(e.wrkLatency.p50, figures.P50Us/1000)
		e.wrkLatency.p99 = max(e.wrkLatency.p99, figures.P99Us/1000)
	}
	return samples, start, nil
}

// waitWrkFile waits until a wrk thread's file of answers exists and returns its lines.
func waitWrkFile(ctx context.Context, path string, cmd *exec.Cmd) ([]string, error) {
	for {
		raw, err := os.ReadFile(path)
		if err == nil {
			return strings.Fields(string(raw)), nil
		}
		if cmd.ProcessState != nil {
			return nil, fmt.Errorf("wrk exited before writing %s", filepath.Base(path))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// wrkAcceptTimes fills in each accepted sample's accept time from the server's clock (wrk
// does not tell when each answer came): the time from the start of the load until the message
// was accepted, which is what accepted per second is computed from.
func wrkAcceptTimes(samples []benchSample) []benchSample {
	for i := range samples {
		s := &samples[i]
		if s.ID != "" && !s.AcceptedAt.IsZero() {
			s.Accept = s.AcceptedAt.Sub(s.Start)
		}
	}
	return samples
}
