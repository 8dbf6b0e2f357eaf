package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"switchboard/cmd/switchboard/internal/bench"
	"switchboard/store/pgtest"
)

// TestBenchWrkLoad runs the submissions from wrk, another process: every message is accepted
// once and delivered, and the figures come from wrk's answers and the server's clock.
func TestBenchWrkLoad(t *testing.T) {
	if _, err := exec.LookPath("wrk"); err != nil {
		t.Skip("needs wrk on PATH: apt-get install wrk (.ci/run and make bench install it)")
	}
	t.Parallel()
	r := runBenchJSON(t, "--messages", "300", "--callers", "8", "--load", "wrk", "--package", quickstartCopy(t))
	if r.Load != "wrk" || r.Messages != 300 || r.Delivered != 300 || r.Lost != 0 || r.Duplicates != 0 || !r.OK {
		t.Fatalf("load %q, messages %d, delivered %d, lost %d, duplicates %d, ok %v; want wrk, 300, 300, 0, 0, true",
			r.Load, r.Messages, r.Delivered, r.Lost, r.Duplicates, r.OK)
	}
	if r.AcceptedPerSecond <= 0 || r.AcceptP99Ms < r.AcceptP50Ms || r.AcceptP50Ms <= 0 || r.ServeCPUUsPerMessage <= 0 {
		t.Fatalf("figures not measured: %+v", r)
	}
}

// TestBenchPostgresInstances runs two serve processes on a fresh schema of the test server:
// nothing is lost or sent twice, and the database's CPU is charged to the messages.
func TestBenchPostgresInstances(t *testing.T) {
	url := pgtest.Schema(t) // skips without a server; the bench makes its own schema in it
	t.Parallel()
	r := runBenchJSON(t, "--messages", "300", "--callers", "8", "--database", url, "--instances", "2", "--package", quickstartCopy(t))
	if r.Database != "postgres" || r.Instances != 2 || r.Messages != 300 || r.Delivered != 300 || r.Lost != 0 || r.Duplicates != 0 || !r.OK {
		t.Fatalf("database %q, instances %d, messages %d, delivered %d, lost %d, duplicates %d; want postgres, 2, 300, 300, 0, 0",
			r.Database, r.Instances, r.Messages, r.Delivered, r.Lost, r.Duplicates)
	}
	if r.ServeCPUUsPerMessage <= 0 || r.DatabaseCPUUsPerMessage == nil || *r.DatabaseCPUUsPerMessage <= 0 {
		t.Fatalf("serve CPU %.1f µs, database CPU %v; want both measured (the server runs on this machine)",
			r.ServeCPUUsPerMessage, r.DatabaseCPUUsPerMessage)
	}
}

// runBenchJSON runs the bench binary with -o json and decodes its result; it fails the test
// when the bench does not exit 0.
func runBenchJSON(t *testing.T, args ...string) bench.Result {
	t.Helper()
	_, r, _ := benchJSON(t, args...)
	return r
}

// benchJSON runs the bench binary with -o json, fails the test unless it exits 0, and returns
// its result both as members and as a Result, with the run's wall time.
func benchJSON(t *testing.T, args ...string) (map[string]any, bench.Result, time.Duration) {
	t.Helper()
	began := time.Now()
	stdout, stderr, code := cli(t, append([]string{"bench", "-o", "json"}, args...)...)
	wall := time.Since(began)
	if code != 0 {
		t.Fatalf("bench %v: exit %d\nstdout %s\nstderr %s", args, code, stdout, stderr)
	}
	var raw map[string]any
	var r bench.Result
	for _, into := range []any{&raw, &r} {
		if err := json.Unmarshal([]byte(strings.TrimSpace(stdout)), into); err != nil {
			t.Fatalf("bench -o json printed %q: %v", stdout, err)
		}
	}
	return raw, r, wall
}

// wantNumbers fails the test for each of members that raw does not hold as a number.
func wantNumbers(t *testing.T, raw map[string]any, members ...string) {
	t.Helper()
	for _, member := range members {
		if _, ok := raw[member].(float64); !ok {
			t.Errorf("member %s is %v (%T), want a number", member, raw[member], raw[member])
		}
	}
}

// benchTable runs the bench binary for its human table, fails the test unless it exits 0 and
// prints each of wants, and returns the table.
func benchTable(t *testing.T, wants []string, args ...string) string {
	t.Helper()
	stdout, stderr, code := cli(t, append([]string{"bench"}, args...)...)
	if code != 0 {
		t.Fatalf("bench %v: exit %d\nstdout %s\nstderr %s", args, code, stdout, stderr)
	}
	for _, want := range wants {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	return stdout
}
