package bench

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// writeBenchOut writes the raw samples of a run into dir as samples.csv, one row per
// submission, and the chart of bench_chart.go, under title, as latency.png.
func writeBenchOut(dir, title string, samples []benchSample, start time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	path := filepath.Join(dir, "samples.csv")
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"index", "channel", "startMs", "acceptMs", "httpStatus", "id", "status", "endToEndMs"})
	for _, s := range samples {
		e2e := ""
		if finalStatus(s.Channel, s.Status) {
			e2e = strconv.FormatFloat(roundMs(s.endToEnd()), 'f', 3, 64)
		}
		_ = w.Write([]string{
			strconv.Itoa(s.Index), s.Channel,
			strconv.FormatFloat(roundMs(s.Start.Sub(start)), 'f', 3, 64),
			strconv.FormatFloat(roundMs(s.Accept), 'f', 3, 64),
			strconv.Itoa(s.HTTPStatus), s.ID, s.Status, e2e,
		})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return writeBenchChart(filepath.Join(dir, "latency.png"), title, samples, start)
}
