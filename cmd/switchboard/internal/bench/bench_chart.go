package bench

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Chart geometry: three stacked panels over one time axis, 1000 × 900 pixels, the run cut into
// chartBuckets equal windows.
const (
	chartWidth   = 10 * vg.Inch
	chartHeight  = 9 * vg.Inch
	chartDPI     = 100
	chartBuckets = 120
)

var (
	chartBlue   = color.RGBA{31, 119, 180, 255}
	chartGreen  = color.RGBA{44, 160, 44, 255}
	chartOrange = color.RGBA{255, 127, 14, 255}
	chartRed    = color.RGBA{214, 39, 40, 255}
)

// chartPanel is one panel of the chart: its title, the label (with unit) of its y axis, and
// its lines.
type chartPanel struct {
	title, yLabel string
	series        []chartSeries
}

// chartSeries is one line of a panel: its legend entry, its colour, and one value per window.
// NaN marks a window that had no samples; the chart leaves a gap there, never a zero.
type chartSeries struct {
	name   string
	colour color.RGBA
	values []float64
}

// chartPanels cuts the run into chartBuckets windows and computes, per window, the throughput
// (accepted and delivered per second; a window in which nothing happened measured 0), the accept
// latency by submission time and the end-to-end latency by time of the final state (p50 and
// p99 in milliseconds; NaN where the window had no samples). It returns the window's width.
func chartPanels(samples []benchSample, start time.Time) (time.Duration, []chartPanel) {
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
	width := max(span/chartBuckets, time.Millisecond)
	bucket := func(t time.Time) int { return min(max(int(t.Sub(start)/width), 0), chartBuckets-1) }
	accepted := make([]float64, chartBuckets)
	delivered := make([]float64, chartBuckets)
	acceptLat := make([][]time.Duration, chartBuckets)
	endLat := make([][]time.Duration, chartBuckets)
	for _, s := range samples {
		if s.ID == "" {
			continue
		}
		accepted[bucket(s.Start.Add(s.Accept))]++
		acceptLat[bucket(s.Start)] = append(acceptLat[bucket(s.Start)], s.Accept)
		if finalStatus(s.Channel, s.Status) && !s.UpdatedAt.IsZero() {
			d := bucket(s.UpdatedAt)
			delivered[d]++
			endLat[d] = append(endLat[d], s.endToEnd())
		}
	}
	perSec := 1 / width.Seconds()
	for i := range accepted {
		accepted[i] *= perSec
		delivered[i] *= perSec
	}
	return width, []chartPanel{
		{"Throughput", "messages per second", []chartSeries{
			{"accepted", chartBlue, accepted}, {"delivered", chartGreen, delivered}}},
		{"Accept latency, by submission time", "milliseconds", []chartSeries{
			{"p50", chartOrange, bucketPercentiles(acceptLat, 50)}, {"p99", chartRed, bucketPercentiles(acceptLat, 99)}}},
		{"End-to-end latency, by time of the final state", "milliseconds", []chartSeries{
			{"p50", chartOrange, bucketPercentiles(endLat, 50)}, {"p99", chartRed, bucketPercentiles(endLat, 99)}}},
	}
}

// bucketPercentiles is the p-th percentile of each bucket, in milliseconds (NaN for an empty
// bucket: it has no latency, not a latency of zero).
func bucketPercentiles(buckets [][]time.Duration, p float64) []float64 {
	out := make([]float64, len(buckets))
	for i, b := range buckets {
		out[i] = math.NaN()
		if len(b) > 0 {
			out[i] = percentileMs(b, p)
		}
	}
	return out
}

// chartSegments splits a series into the runs of consecutive windows that have a value, each
// point at the middle of its window in seconds: the plotter draws each run as one line, so a
// window without samples is a break between two runs.
func chartSegments(values []float64, width time.Duration) []plotter.XYs {
	var out []plotter.XYs
	var run plotter.XYs
	for i, v := range values {
		if math.IsNaN(v) {
			if len(run) > 0 {
				out, run = append(out, run), nil
			}
			continue
		}
		run = append(run, plotter.XY{X: (float64(i) + 0.5) * width.Seconds(), Y: v})
	}
	if len(run) > 0 {
		out = append(out, run)
	}
	return out
}

// panelPlot draws one panel: a grid, each series as its runs (a lone point as a dot), a legend,
// and axes from zero with their units.
func panelPlot(pn chartPanel, width time.Duration) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.title
	p.X.Label.Text = "time since the first submission (s)"
	p.Y.Label.Text = pn.yLabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	for _, s := range pn.series {
		style := draw.LineStyle{Color: s.colour, Width: vg.Points(1.5)}
		for _, seg := range chartSegments(s.values, width) {
			if len(seg) == 1 {
				dot, err := plotter.NewScatter(seg)
				if err != nil {
					return nil, fmt.Errorf("%s %s: %w", pn.title, s.name, err)
				}
				dot.GlyphStyle = draw.GlyphStyle{Color: s.colour, Radius: vg.Points(2), Shape: draw.CircleGlyph{}}
				p.Add(dot)
				continue
			}
			line, err := plotter.NewLine(seg)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", pn.title, s.name, err)
			}
			line.LineStyle = style
			p.Add(line)
		}
		p.Legend.Add(s.name, &plotter.Line{LineStyle: style})
	}
	p.X.Min, p.X.Max = 0, float64(chartBuckets)*width.Seconds()
	p.Y.Min = 0
	if !(p.Y.Max > 0) { // no values (or only zeros): an axis of its own, not a degenerate one
		p.Y.Max = 1
	}
	p.Y.Max *= 1.2 // headroom for the legend
	p.X.Tick.Marker, p.Y.Tick.Marker = plainTicks{}, plainTicks{}
	return p, nil
}

// plainTicks places ticks where plot.DefaultTicks does, and labels them with as few digits as
// each needs ("25000", "0.3"), not with a shared count of decimals ("25000.00").
type plainTicks struct{}

// Ticks returns the ticks between lo and hi.
func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ticks {
		if ticks[i].Label != "" {
			// Six significant digits drop the float noise of the tick's position (0.30000000000000004).
			v, _ := strconv.ParseFloat(strconv.FormatFloat(ticks[i].Value, 'g', 6, 64), 64)
			ticks[i].Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	return ticks
}

// writeBenchChart draws the run over time into a PNG at path: throughput, accept latency and
// end-to-end latency in three panels over one time axis, under title.
func writeBenchChart(path, title string, samples []benchSample, start time.Time) error {
	width, panels := chartPanels(samples, start)
	plots := make([][]*plot.Plot, len(panels))
	for i, pn := range panels {
		p, err := panelPlot(pn, width)
		if err != nil {
			return fmt.Errorf("chart: %w", err)
		}
		plots[i] = []*plot.Plot{p}
	}
	plots[0][0].Title.Text = title + "\n" + plots[0][0].Title.Text
	img := vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(chartDPI))
	pad := 3 * vg.Millimeter
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadTop: pad, PadBottom: pad, PadLeft: pad, PadRight: 2 * pad, PadY: 2 * pad}
	canvases := plot.Align(plots, tiles, draw.New(img))
	for i := range plots {
		plots[i][0].Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("encode %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
