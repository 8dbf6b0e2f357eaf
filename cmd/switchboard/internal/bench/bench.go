package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"switchboard/engine/cputime"
)

// Result is the outcome of a run. Its JSON form carries the figures docs/benchmarks.md
// describes, and a few members more that say what was run.
type Result struct {
	OK                 bool    `json:"ok"`
	Channel            string  `json:"channel"`
	Callers            int     `json:"callers"`
	Concurrency        int     `json:"concurrency"`
	GatewayLatencyMs   float64 `json:"gatewayLatencyMs"`
	Rate               float64 `json:"rate"`
	Requested          int     `json:"requested"`
	Messages           int     `json:"messages"`
	Refused            int     `json:"refused"`
	Delivered          int     `json:"delivered"`
	Failed             int     `json:"failed"`
	AcceptedPerSecond  float64 `json:"acceptedPerSecond"`
	DeliveredPerSecond float64 `json:"deliveredPerSecond"`
	AcceptP50Ms        float64 `json:"acceptP50Ms"`
	AcceptP99Ms        float64 `json:"acceptP99Ms"`
	EndToEndP50Ms      float64 `json:"endToEndP50Ms"`
	EndToEndP99Ms      float64 `json:"endToEndP99Ms"`
	PeakRSSBytes       int64   `json:"peakRssBytes"`
	Lost               int     `json:"lost"`
	Duplicates         int     `json:"duplicates"`
	ReceiptsFailed     int     `json:"receiptsFailed"`
	WriterBatches      int64   `json:"writerBatches"`
	WriterMeanBatch    float64 `json:"writerMeanBatch"`
	GivenWaySeconds    float64 `json:"givenWaySeconds"`
	DurationSeconds    float64 `json:"durationSeconds"`
	// ProcessCPUUsPerMessage is the CPU time of the whole bench process (stack, stand-ins and
	// callers) per accepted message, in microseconds.
	ProcessCPUUsPerMessage float64 `json:"processCpuUsPerMessage"`
	Events
}

// Validate refuses flag values a run cannot honour; the command reports them as usage errors.
func (c Config) Validate() error {
	switch {
	case c.Messages < 1:
		return errors.New("--messages must be at least 1")
	case c.Callers < 1:
		return errors.New("--callers must be at least 1")
	case c.Channel != "sms" && c.Channel != "email" && c.Channel != "peer" && c.Channel != "mixed":
		return errors.New("--channel must be sms, email, peer or mixed")
	case c.GatewayLatency < 0 || c.ReceiptDelay < 0:
		return errors.New("--gateway-latency and --receipt-delay must not be negative")
	case c.Rate < 0:
		return errors.New("--rate must not be negative")
	case c.Concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	case c.Timeout <= 0:
		return errors.New("--timeout must be positive")
	}
	return nil
}

// Run makes one measurement of the stack start wires: it submits cfg.Messages messages, waits
// until each is final (or cfg.Timeout after the last submission), reads every one back, and
// summarizes. progress, when set, is told how many accepted messages have left the queue. A run
// that lost, duplicated or failed a message still returns its Result, with OK false; an error
// means the run could not be made.
func Run(ctx context.Context, cfg Config, start StartStack, log *slog.Logger, progress func(done, total int64)) (Result, error) {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	e, err := startBench(ctx, cfg, start, log)
	if err != nil {
		return Result{}, err
	}
	defer e.close()
	bodies, err := benchBodies(e.stack.Package, e.stack.CompanionID, benchChannels(cfg.Channel))
	if err != nil {
		return Result{}, err
	}
	stopProfile := func() {}
	if cfg.CPUProfile != "" {
		// The profile covers the load and the dispatch, not the final read of every message.
		if stopProfile, err = startCPUProfile(cfg.CPUProfile); err != nil {
			return Result{}, environment("bench.unwritable", cfg.CPUProfile, err)
		}
		defer stopProfile()
	}
	cpuStart, _ := cputime.Process()
	var accepted atomic.Int64
	loadDone := make(chan struct{})
	var samples []benchSample
	var begin time.Time
	go func() {
		defer close(loadDone)
		samples, begin = e.load(ctx, cfg, bodies, &accepted)
	}()
	deadline, err := e.waitSettled(ctx, loadDone, &accepted, cfg.Timeout,
		func(n int64) { progress(n, int64(cfg.Messages)) })
	<-loadDone
	stopProfile()
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	if err := e.readFinal(ctx, samples, min(cfg.Callers, 16), deadline); err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	dups, err := e.duplicates(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	var events Events
	if e.stack.Events != nil {
		pending, err := e.drainEvents(ctx, time.Now().Add(cfg.Timeout))
		if err != nil {
			return Result{}, fmt.Errorf("bench: %w", err)
		}
		events = eventFigures(e.stack.Events, begin, pending)
	}
	cpuEnd, _ := cputime.Process()
	r := summarize(cfg, samples, begin, dups, PeakRSSBytes())
	r.Events = events
	if r.Messages > 0 {
		r.ProcessCPUUsPerMessage = math.Round(float64((cpuEnd-cpuStart).Microseconds())/float64(r.Messages)*10) / 10
	}
	r.ReceiptsFailed = e.receiptsFailed()
	if ws := e.stack.Store.WriterStats(); ws.Batches > 0 {
		r.WriterBatches, r.WriterMeanBatch = ws.Batches, float64(ws.Requests)/float64(ws.Batches)
	}
	r.GivenWaySeconds = e.stack.Dispatcher.Figures().GivenWay.Seconds()
	if cfg.Out != "" {
		title := fmt.Sprintf("switchboard bench: %d %s message(s), %d caller(s), gateway latency %v",
			cfg.Messages, cfg.Channel, cfg.Callers, cfg.GatewayLatency)
		if err := writeBenchOut(cfg.Out, title, samples, begin); err != nil {
			return Result{}, environment("bench.unwritable", cfg.Out, err)
		}
	}
	return r, nil
}

// WriteTable writes the result as the human table.
func (r Result) WriteTable(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "scenario\t%d %s message(s), %d caller(s), gateway latency %gms, concurrency %d\n",
		r.Requested, r.Channel, r.Callers, r.GatewayLatencyMs, r.Concurrency)
	fmt.Fprintf(w, "accepted\t%d (%d refused) at %.1f/s\n", r.Messages, r.Refused, r.AcceptedPerSecond)
	fmt.Fprintf(w, "final\t%d delivered, %d failed, %d lost; delivered end to end at %.1f/s\n",
		r.Delivered, r.Failed, r.Lost, r.DeliveredPerSecond)
	fmt.Fprintf(w, "accept latency\tp50 %.1f ms, p99 %.1f ms\n", r.AcceptP50Ms, r.AcceptP99Ms)
	fmt.Fprintf(w, "end to end\tp50 %.1f ms, p99 %.1f ms\n", r.EndToEndP50Ms, r.EndToEndP99Ms)
	fmt.Fprintf(w, "peak RSS\t%.1f MiB\n", float64(r.PeakRSSBytes)/(1<<20))
	fmt.Fprintf(w, "duplicates\t%d\n", r.Duplicates)
	fmt.Fprintf(w, "receipts failed\t%d (the mock gateway gave up posting them)\n", r.ReceiptsFailed)
	fmt.Fprintf(w, "store writer\t%d transactions, %.1f requests each on average\n", r.WriterBatches, r.WriterMeanBatch)
	fmt.Fprintf(w, "gave way\t%.1f s (the dispatcher held one claim while the burst had the CPU)\n", r.GivenWaySeconds)
	fmt.Fprintf(w, "duration\t%.1f s\n", r.DurationSeconds)
	fmt.Fprintf(w, "process CPU\t%.1f µs per message (stack, stand-ins and callers)\n", r.ProcessCPUUsPerMessage)
	if r.Events.Received > 0 || r.EventsRefused > 0 || r.EventsPending > 0 {
		r.Events.writeLine(w)
	}
	return w.Flush()
}

// Error is a run that could not be made, with a stable code and the path at fault. Refused
// errors are the input's fault (the command exits 1), the others the environment's (exit 3).
type Error struct {
	Refused    bool
	Code, Path string
	Err        error
}

func (e *Error) Error() string { return e.Code + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// refused is an Error that is the input's fault.
func refused(code, path, message string) error {
	return &Error{Refused: true, Code: code, Path: path, Err: errors.New(message)}
}

// environment is an Error that is the environment's fault: a file or a listener.
func environment(code, path string, err error) error {
	return &Error{Code: code, Path: path, Err: err}
}
