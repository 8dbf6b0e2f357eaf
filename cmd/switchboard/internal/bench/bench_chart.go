package bench

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"time"
)

// Chart geometry: three stacked panels, each autoscaled to its own maximum, with a gridline at
// every quarter of the height and of the width. The standard library has no fonts, so the
// chart carries no text: the colours are fixed and documented on writeBenchChart.
const (
	chartWidth   = 960
	panelHeight  = 200
	chartMargin  = 20
	chartBuckets = 120
)

var (
	chartBackground = color.RGBA{255, 255, 255, 255}
	chartGrid       = color.RGBA{225, 225, 225, 255}
	chartBlue       = color.RGBA{31, 119, 180, 255}
	chartGreen      = color.RGBA{44, 160, 44, 255}
	chartOrange     = color.RGBA{255, 127, 14, 255}
	chartRed        = color.RGBA{214, 39, 40, 255}
)

// writeBenchChart draws the run over time into a PNG at path, in three panels from top to
// bottom: throughput (blue: accepted per second, green: delivered per second), accept latency
// (orange: p50, red: p99, by submission time) and end-to-end latency (orange: p50, red: p99,
// by time of the final state).
func writeBenchChart(path string, samples []benchSample, start time.Time) error {
	var end time.Time
	for _, s := range samples {
		for _, t := range []time.Time{s.Start.Add(s.Accept), s.UpdatedAt} {
			if t.After(end) {
				end = t
			}
		}
	}
	span := end.Sub(start)
	if span <= 0 {
		span = time.Second
	}
	width := span / chartBuckets
	bucket := func(t time.Time) int { return min(max(int(t.Sub(start)/max(width, 1)), 0), chartBuckets-1) }
	accepted := make([]float64, chartBuckets)
	delivered := make([]float64, chartBuckets)
	acceptLat := make([][]time.Duration, chartBuckets)
	endLat := make([][]time.Duration, chartBuckets)
	for _, s := range samples {
		if s.ID == "" {
			continue
		}
		b := bucket(s.Start.Add(s.Accept))
		accepted[b]++
		acceptLat[bucket(s.Start)] = append(acceptLat[bucket(s.Start)], s.Accept)
		if finalStatus(s.Channel, s.Status) && !s.UpdatedAt.IsZero() {
			d := bucket(s.UpdatedAt)
			delivered[d]++
			endLat[d] = append(endLat[d], s.endToEnd())
		}
	}
	perSec := 1 / max(width, time.Millisecond).Seconds()
	for i := range accepted {
		accepted[i] *= perSec
		delivered[i] *= perSec
	}
	img := image.NewRGBA(image.Rect(0, 0, chartWidth, 3*panelHeight+4*chartMargin))
	chartFill(img, img.Bounds(), chartBackground)
	panels := [][]chartSeries{
		{{accepted, chartBlue}, {delivered, chartGreen}},
		{{bucketPercentiles(acceptLat, 50), chartOrange}, {bucketPercentiles(acceptLat, 99), chartRed}},
		{{bucketPercentiles(endLat, 50), chartOrange}, {bucketPercentiles(endLat, 99), chartRed}},
	}
	for i, p := range panels {
		top := chartMargin + i*(panelHeight+chartMargin)
		drawPanel(img, image.Rect(chartMargin, top, chartWidth-chartMargin, top+panelHeight), p)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// chartSeries is one line of a panel.
type chartSeries struct {
	values []float64
	colour color.RGBA
}

// bucketPercentiles is the p-th percentile of each bucket, in milliseconds (0 for an empty bucket).
func bucketPercentiles(buckets [][]time.Duration, p float64) []float64 {
	out := make([]float64, len(buckets))
	for i, b := range buckets {
		out[i] = percentileMs(b, p)
	}
	return out
}

// drawPanel draws the grid and the lines of one panel, scaled to the panel's largest value.
func drawPanel(img *image.RGBA, r image.Rectangle, lines []chartSeries) {
	for q := 0; q <= 4; q++ {
		y := r.Max.Y - q*r.Dy()/4
		chartFill(img, image.Rect(r.Min.X, y, r.Max.X, y+1), chartGrid)
		x := r.Min.X + q*r.Dx()/4
		chartFill(img, image.Rect(x, r.Min.Y, x+1, r.Max.Y), chartGrid)
	}
	top := 0.0
	for _, l := range lines {
		for _, v := range l.values {
			top = max(top, v)
		}
	}
	if top == 0 {
		return
	}
	for _, l := range lines {
		n := len(l.values)
		prevX, prevY := -1, -1
		for i, v := range l.values {
			x := r.Min.X + (i*r.Dx()+r.Dx()/2)/n
			y := r.Max.Y - int(v/top*float64(r.Dy()-1))
			if prevX >= 0 {
				chartLine(img, prevX, prevY, x, y, l.colour)
			}
			prevX, prevY = x, y
		}
	}
}

// chartFill paints a rectangle.
func chartFill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// chartLine draws a two-pixel-thick segment (Bresenham).
func chartLine(img *image.RGBA, x0, y0, x1, y1 int, c color.RGBA) {
	dx, dy := chartAbs(x1-x0), -chartAbs(y1-y0)
	sx, sy := chartSign(x1-x0), chartSign(y1-y0)
	e := dx + dy
	for {
		img.SetRGBA(x0, y0, c)
		img.SetRGBA(x0, y0+1, c)
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

func chartAbs(v int) int { return max(v, -v) }

func chartSign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
