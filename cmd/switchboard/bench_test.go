package main

import (
	"encoding/csv"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestBenchReportsItsFigures runs the real binary on a short closed-loop SMS run: every figure
// docs/benchmarks.md lists is present and sane, nothing is lost or duplicated, --out writes one
// CSV row per submission, and --cpuprofile a profile.
func TestBenchReportsItsFigures(t *testing.T) {
	t.Parallel()
	pkg := quickstartCopy(t)
	out := filepath.Join(t.TempDir(), "run")
	profile := filepath.Join(t.TempDir(), "cpu.pprof")
	raw, r, wall := benchJSON(t, "--messages", "200", "--callers", "8", "--package", pkg,
		"--out", out, "--cpuprofile", profile)
	wantNumbers(t, raw, "acceptedPerSecond", "deliveredPerSecond", "acceptP50Ms", "acceptP99Ms",
		"endToEndP50Ms", "endToEndP99Ms", "peakRssBytes", "messages", "lost", "duplicates", "completionSeconds")
	for _, member := range []string{"deliveryLagP50Ms", "deliveryLagP99Ms", "behindSchedule", "openLoopSeconds"} {
		if v, ok := raw[member]; ok {
			t.Errorf("a burst reports the open loop's member %s (%v)", member, v)
		}
	}
	if r.Messages != 200 || r.Lost != 0 || r.Duplicates != 0 || r.Delivered != 200 || !r.OK {
		t.Fatalf("messages %d, delivered %d, lost %d, duplicates %d, ok %v; want 200, 200, 0, 0, true",
			r.Messages, r.Delivered, r.Lost, r.Duplicates, r.OK)
	}
	if r.AcceptedPerSecond <= 0 || r.DeliveredPerSecond <= 0 || r.PeakRSSBytes <= 0 {
		t.Fatalf("throughput or RSS not measured: %+v", r)
	}
	if r.CompletionSeconds <= 0 || r.CompletionSeconds > wall.Seconds() || r.Admission != "give-way" {
		t.Fatalf("completionSeconds %v (wall time %v), admission %q; want a completion within the run, give-way",
			r.CompletionSeconds, wall, r.Admission)
	}
	if r.AcceptP50Ms <= 0 || r.AcceptP99Ms < r.AcceptP50Ms || r.EndToEndP99Ms < r.EndToEndP50Ms {
		t.Fatalf("percentiles out of order: %+v", r)
	}
	if r.ServeCPUUsPerMessage <= 0 || r.DatabaseCPUUsPerMessage != nil || r.Database != "sqlite" || r.Instances != 1 || r.Load != "bench" {
		t.Fatalf("serve CPU %.1f µs, database CPU %v, database %q, instances %d, load %q; want serve CPU, no database CPU, sqlite, 1, bench",
			r.ServeCPUUsPerMessage, r.DatabaseCPUUsPerMessage, r.Database, r.Instances, r.Load)
	}
	if r.WriterBatches <= 0 || r.WriterMeanBatch < 1 {
		t.Fatalf("writer figures: %d transactions, %.1f requests each; want some, of at least one", r.WriterBatches, r.WriterMeanBatch)
	}
	// A CPU profile is gzipped protobuf.
	if b, err := os.ReadFile(profile); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("--cpuprofile wrote %d bytes (%v), want a gzipped profile", len(b), err)
	}

	f, err := os.Open(filepath.Join(out, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 201 || rows[0][0] != "index" {
		t.Fatalf("samples.csv has %d rows (header %v), want a header and 200 rows", len(rows), rows[0])
	}
	if img, err := os.Open(filepath.Join(out, "latency.png")); err != nil {
		t.Fatal(err)
	} else {
		defer img.Close()
		if _, err := png.DecodeConfig(img); err != nil {
			t.Fatalf("latency.png: %v", err)
		}
	}
	for _, row := range rows[1:] {
		if row[4] != "202" || row[6] != "delivered" || row[7] == "" {
			t.Fatalf("sample row %v: want 202, delivered and an end-to-end latency", row)
		}
	}
}

// TestBenchMixedChannelsHumanOutput sends on every channel (SMS gateway, SMTP sink, companion
// peer) and checks the human table.
func TestBenchMixedChannelsHumanOutput(t *testing.T) {
	t.Parallel()
	stdout := benchTable(t, []string{"30 mixed message(s)", "accepted", "30 delivered, 0 failed, 0 lost",
		"accept latency", "end to end", "peak RSS"},
		"--messages", "30", "--callers", "3", "--channel", "mixed", "--package", quickstartCopy(t))
	if !regexp.MustCompile(`(?m)^duplicates +0$`).MatchString(stdout) {
		t.Errorf("output lacks a duplicates line of 0:\n%s", stdout)
	}
}

// TestBenchPeerPooledThroughRelay: a small peer run on pooled streams through the bench's
// relay delivers everything once and prints the peer figures.
func TestBenchPeerPooledThroughRelay(t *testing.T) {
	t.Parallel()
	stdout := benchTable(t, []string{"30 peer message(s)", "30 delivered, 0 failed, 0 lost", "(send to acknowledgement)"},
		"--messages", "30", "--callers", "3", "--channel", "peer", "--peer-protocol", "pooled", "--peer-relay",
		"--package", quickstartCopy(t))
	for _, line := range []string{`^peer transport +pooled, through a circuit relay$`, `^duplicates +0$`} {
		if !regexp.MustCompile(`(?m)` + line).MatchString(stdout) {
			t.Errorf("output lacks a line %s:\n%s", line, stdout)
		}
	}
}

// TestBenchRefusesBadFlags checks the usage errors (exit 2).
func TestBenchRefusesBadFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"bench", "--messages", "0"}, {"bench", "--callers", "0"}, {"bench", "--channel", "fax"},
		{"bench", "--rate", "-1"}, {"bench", "extra"}, {"bench", "--instances", "2"}, {"bench", "--instances", "0"},
		{"bench", "--load", "ab"}, {"bench", "--load", "wrk", "--rate", "100"}, {"bench", "--load", "wrk", "--channel", "mixed"},
		{"bench", "--channel", "peer", "--peer-protocol", "udp"}, {"bench", "--peer-relay"}, {"bench", "--peer-protocol", "pooled"},
	} {
		if _, stderr, code := cli(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
	if _, _, code := cli(t, "bench", "--package", filepath.Join(t.TempDir(), "missing")); code != 3 {
		t.Errorf("missing package: exit %d, want 3", code)
	}
}
