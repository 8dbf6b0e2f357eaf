package bench

import (
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// gappedRun is a run of 1.2 s in which messages were submitted and delivered in its first and
// last 0.4 s and nothing happened in between: the middle windows have no samples.
func gappedRun(t *testing.T) ([]benchSample, time.Time) {
	t.Helper()
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var samples []benchSample
	for i := range 80 {
		at := time.Duration(i) * 10 * time.Millisecond // 0 … 390 ms
		if i >= 40 {
			at += 400 * time.Millisecond // 800 … 1190 ms
		}
		due := start.Add(at)
		accept := time.Duration(2+i%3) * time.Millisecond
		samples = append(samples, benchSample{
			Index: i, Channel: "sms", Start: due, Accept: accept, HTTPStatus: 202, ID: "m" + string(rune('a'+i%26)),
			Status: "delivered", AcceptedAt: due.Add(accept), UpdatedAt: due.Add(accept + 5*time.Millisecond),
		})
	}
	return samples, start
}

func TestChartLeavesAGapWhereAWindowHadNoSamples(t *testing.T) {
	t.Parallel()
	samples, start := gappedRun(t)
	width, panels := chartPanels(samples, start)
	if len(panels) != 3 {
		t.Fatalf("%d panels, want throughput, accept latency and end-to-end latency", len(panels))
	}
	middle := int(600 * time.Millisecond / width) // a window in the quiet stretch
	for _, pn := range panels[1:] {
		for _, s := range pn.series {
			if len(s.values) != chartBuckets {
				t.Fatalf("%s %s: %d values, want one per window (%d)", pn.title, s.name, len(s.values), chartBuckets)
			}
			if !math.IsNaN(s.values[middle]) {
				t.Errorf("%s %s: the empty window %d is %v, want NaN (no samples, not a latency of 0)", pn.title, s.name, middle, s.values[middle])
			}
			if math.IsNaN(s.values[0]) {
				t.Errorf("%s %s: the first window had samples but has no value", pn.title, s.name)
			}
			segs := chartSegments(s.values, width)
			if len(segs) < 2 {
				t.Fatalf("%s %s: %d runs handed to the plotter, want a break around the quiet stretch", pn.title, s.name, len(segs))
			}
			for _, seg := range segs {
				for _, p := range seg {
					if p.X > 0.45 && p.X < 0.75 {
						t.Errorf("%s %s: a point at %.3f s, inside the quiet stretch", pn.title, s.name, p.X)
					}
					if math.IsNaN(p.Y) {
						t.Errorf("%s %s: a NaN handed to the plotter at %.3f s", pn.title, s.name, p.X)
					}
				}
			}
		}
	}
	// Throughput is measured in every window: nothing accepted in a window is a rate of 0.
	for _, s := range panels[0].series {
		if s.values[middle] != 0 {
			t.Errorf("throughput %s in the quiet window = %v, want 0", s.name, s.values[middle])
		}
	}
}

func TestChartSegmentsSplitAtEveryEmptyWindow(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	segs := chartSegments([]float64{1, 2, nan, nan, 3, nan, 4, 5}, time.Second)
	want := [][]float64{{0.5, 1.5}, {4.5}, {6.5, 7.5}} // window middles, in seconds
	if len(segs) != len(want) {
		t.Fatalf("%d runs, want %d: %v", len(segs), len(want), segs)
	}
	for i, seg := range segs {
		if len(seg) != len(want[i]) {
			t.Fatalf("run %d has %d points, want %d: %v", i, len(seg), len(want[i]), seg)
		}
		for j, p := range seg {
			if p.X != want[i][j] {
				t.Errorf("run %d point %d at x = %v, want %v", i, j, p.X, want[i][j])
			}
		}
	}
	if got := chartSegments([]float64{nan, nan}, time.Second); len(got) != 0 {
		t.Fatalf("a series without values gave %d runs, want none", len(got))
	}
}

func TestWriteBenchChartWritesAPNGOfTheChartSize(t *testing.T) {
	t.Parallel()
	samples, start := gappedRun(t)
	path := filepath.Join(t.TempDir(), "latency.png")
	if err := writeBenchChart(path, "test run", samples, start); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("latency.png does not decode as a PNG: %v", err)
	}
	if cfg.Width != 1000 || cfg.Height != 900 {
		t.Fatalf("latency.png is %d × %d pixels, want 1000 × 900", cfg.Width, cfg.Height)
	}
	// A run without a single accepted message still draws (empty panels with their axes).
	if err := writeBenchChart(filepath.Join(t.TempDir(), "empty.png"), "empty run", nil, start); err != nil {
		t.Fatalf("an empty run: %v", err)
	}
}
