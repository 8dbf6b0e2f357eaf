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
	// CompletionSeconds is the time from the first acceptance to the last final state (the last
	// receipt, or failure, of the run), on the server's clock.
	CompletionSeconds float64 `json:"completionSeconds"`
	// Admission is the serve processes' admission policy: "give-way" or "off".
	Admission string `json:"admission"`
	// Database is "sqlite" or "postgres", Instances the serve processes on it, Load who made
	// the submissions: "bench" (its own callers) or "wrk".
	Database  string `json:"database"`
	Instances int    `json:"instances"`
	Load      string `json:"load"`
	// ServeCPUUsPerMessage is the CPU time of the serve processes over the run (from the first
	// submission until every message was final), per accepted message; the bench's callers
	// and stand-ins are other processes and are not counted.
	ServeCPUUsPerMessage float64 `json:"serveCpuUsPerMessage"`
	// DatabaseCPUUsPerMessage is the CPU time of the PostgreSQL server's processes on this
	// machine that worked for the run, per accepted message; absent on SQLite and for a server
	// elsewhere.
	DatabaseCPUUsPerMessage *float64 `json:"databaseCpuUsPerMessage,omitempty"`
	// LoadAverage is the machine's one-minute load average when the run ended: the figures of
	// a run on a busy machine are lower than they would be on a quiet one.
	LoadAverage float64 `json:"loadAverage"`
	// ProcessCPUUsPerMessage is the CPU time of the bench's own process (its callers, the
	// stand-ins, the event receiver; not the serve processes) per accepted message.
	ProcessCPUUsPerMessage float64 `json:"processCpuUsPerMessage"`
	OpenLoopFigures
	Events
	PeerFigures
}

// Validate refuses flag values a run cannot honour; the command reports them as usage errors.
func (c Config) Validate() error {
	if c.OpenLoop() {
		if err := c.validateOpenLoop(); err != nil {
			return err
		}
	} else if c.Messages < 1 {
		return errors.New("--messages must be at least 1")
	}
	switch {
	case c.Callers < 1:
		return errors.New("--callers must be at least 1")
	case c.Channel != "sms" && c.Channel != "email" && c.Channel != "peer" && c.Channel != "mixed":
		return errors.New("--channel must be sms, email, peer or mixed")
	case c.GatewayLatency < 0 || c.ReceiptDelay < 0:
		return errors.New("--gateway-latency and --receipt-delay must not be negative")
	case c.Concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	case c.Timeout <= 0:
		return errors.New("--timeout must be positive")
	case c.Instances < 1:
		return errors.New("--instances must be at least 1")
	case c.Instances > 1 && c.Database == "":
		return errors.New("--instances above 1 needs --database: several serve processes share only PostgreSQL")
	case c.Load != "" && c.Load != "wrk":
		return errors.New("--load must be wrk")
	case c.Load == "wrk" && c.OpenLoop():
		return errors.New("--load wrk runs a burst (wrk has no fixed-rate mode): it takes no --rate or --duration")
	case c.Admission != "" && c.Admission != AdmissionGiveWay && c.Admission != AdmissionOff:
		return errors.New("--admission must be give-way or off")
	case c.Load == "wrk" && c.Channel == "mixed":
		return errors.New("--load wrk sends one submission body: it takes one channel, not mixed")
	case c.PeerProtocol != "" && c.PeerProtocol != PeerOneShot && c.PeerProtocol != PeerPooled:
		return errors.New("--peer-protocol must be one-shot or pooled")
	case (c.PeerProtocol != "" || c.PeerRelay) && c.peerProtocol() == "":
		return errors.New("--peer-protocol and --peer-relay need --channel peer or mixed")
	}
	return nil
}

// Run makes one measurement of the stack start wires: it submits cfg.Messages messages in a
// burst, or cfg.Rate a second for cfg.Duration in an open loop, waits until each is final (or
// cfg.Timeout after the last submission), reads every one back, and summarizes. progress, when set, is told how many accepted messages have left the queue. A run
// that lost, duplicated or failed a message still returns its Result, with OK false; an error
// means the run could not be made.
func Run(ctx context.Context, cfg Config, start StartStack, log *slog.Logger, progress func(done, total int64)) (Result, error) {
	if progress == nil {
		progress = func(int64, int64) {}
	}
	cfg.Messages = cfg.Submissions()
	e, err := startBench(ctx, cfg, start, log)
	if err != nil {
		return Result{}, err
	}
	defer e.close()
	bodies, err := benchBodies(e.stack.Package, e.stack.CompanionID, benchChannels(cfg.Channel))
	if err != nil {
		return Result{}, err
	}
	pids := e.stack.Processes
	serveBefore := processesCPU(pids)
	if err := e.database.observe(ctx); err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	cpuStart, _ := cputime.Process()
	var accepted atomic.Int64
	loadDone := make(chan struct{})
	var samples []benchSample
	var begin time.Time
	var loadErr error
	go func() {
		defer close(loadDone)
		if cfg.Load == "wrk" {
			samples, begin, loadErr = e.loadWrk(ctx, cfg, bodies, &accepted)
			return
		}
		samples, begin = e.load(ctx, cfg, bodies, &accepted)
	}()
	deadline, err := e.waitSettled(ctx, loadDone, &accepted, cfg.Timeout,
		func(n int64) { progress(n, int64(cfg.Messages)) })
	<-loadDone
	// The run's cost: what the instances and the database did from the first submission until
	// every message was final (the final reads below are not part of it).
	serveCPU := processesCPU(pids) - serveBefore
	if oerr := e.database.observe(ctx); oerr != nil && err == nil {
		err = oerr
	}
	if err == nil {
		err = loadErr
	}
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	// The events still in the outbox go out before the final reads, so that the serve CPU of
	// the run with its events (serveCpuUsPerEvent) leaves those reads out as well.
	var events Events
	if e.stack.Events != nil {
		pending, err := e.drainEvents(ctx, time.Now().Add(cfg.Timeout))
		if err != nil {
			return Result{}, fmt.Errorf("bench: %w", err)
		}
		events = eventFigures(e.stack.Events, begin, pending, processesCPU(pids)-serveBefore)
	}
	if err := e.readFinal(ctx, samples, min(cfg.Callers, 16), deadline); err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	if cfg.Load == "wrk" {
		samples = wrkAcceptTimes(samples)
	}
	dups, err := e.duplicates(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("bench: %w", err)
	}
	cpuEnd, _ := cputime.Process()
	r := summarize(cfg, samples, begin, dups, processPeakRSS(pids))
	r.Events = events
	if r.Messages > 0 {
		r.ProcessCPUUsPerMessage = perMessageUs(cpuEnd-cpuStart, r.Messages)
	}
	if cfg.Load == "wrk" {
		r.AcceptP50Ms, r.AcceptP99Ms = e.wrkLatency.p50, e.wrkLatency.p99
	}
	r.ReceiptsFailed = e.receiptsFailed()
	r.Database, r.Instances, r.Load = "sqlite", max(cfg.Instances, 1), "bench"
	if cfg.Database != "" {
		r.Database = "postgres"
	}
	if cfg.Load != "" {
		r.Load = cfg.Load
	}
	if r.Messages > 0 {
		r.ServeCPUUsPerMessage = perMessageUs(serveCPU, r.Messages)
		if e.database.local() {
			v := perMessageUs(e.database.cpu(), r.Messages)
			r.DatabaseCPUUsPerMessage = &v
		}
	}
	if batches, err := e.stack.Metric(ctx, "switchboard_store_transactions_total"); err == nil && batches > 0 {
		requests, _ := e.stack.Metric(ctx, "switchboard_store_requests_total")
		r.WriterBatches, r.WriterMeanBatch = int64(batches), math.Round(requests/batches*10)/10
	}
	if gw, err := e.stack.Metric(ctx, "switchboard_dispatch_give_way_seconds_total"); err == nil {
		r.GivenWaySeconds = math.Round(gw*10) / 10
	}
	if cfg.Channel == "peer" {
		r.PeerFigures = peerFigures(ctx, cfg, e.stack)
	} else {
		r.PeerFigures = PeerFigures{PeerProtocol: cfg.peerProtocol(), PeerRelay: cfg.PeerRelay}
	}
	r.LoadAverage = loadAverage()
	if cfg.Out != "" {
		load := fmt.Sprintf("%d caller(s)", cfg.Callers)
		if cfg.OpenLoop() {
			load = fmt.Sprintf("%g/s for %v from at most %d caller(s)", cfg.Rate, cfg.Duration, cfg.Callers)
		}
		title := fmt.Sprintf("switchboard bench: %d %s message(s), %s, gateway latency %v",
			cfg.Messages, cfg.Channel, load, cfg.GatewayLatency)
		if err := writeBenchOut(cfg.Out, title, samples, begin); err != nil {
			return Result{}, environment("bench.unwritable", cfg.Out, err)
		}
	}
	return r, nil
}

// perMessageUs is d in microseconds per message, with one decimal.
func perMessageUs(d time.Duration, messages int) float64 {
	return math.Round(float64(d.Microseconds())/float64(messages)*10) / 10
}

// WriteTable writes the result as the human table.
func (r Result) WriteTable(out io.Writer) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	if r.OpenLoopSeconds != nil {
		fmt.Fprintf(w, "scenario\t%d %s message(s) in an open loop, %g/s for %gs from at most %d caller(s), gateway latency %gms, concurrency %d\n",
			r.Requested, r.Channel, r.Rate, *r.OpenLoopSeconds, r.Callers, r.GatewayLatencyMs, r.Concurrency)
	} else {
		fmt.Fprintf(w, "scenario\t%d %s message(s), %d caller(s) (%s), gateway latency %gms, concurrency %d\n",
			r.Requested, r.Channel, r.Callers, r.Load, r.GatewayLatencyMs, r.Concurrency)
	}
	fmt.Fprintf(w, "stack\t%d serve process(es) on %s, admission %s\n", r.Instances, r.Database, r.Admission)
	fmt.Fprintf(w, "accepted\t%d (%d refused) at %.1f/s\n", r.Messages, r.Refused, r.AcceptedPerSecond)
	fmt.Fprintf(w, "final\t%d delivered, %d failed, %d lost; delivered end to end at %.1f/s\n",
		r.Delivered, r.Failed, r.Lost, r.DeliveredPerSecond)
	fmt.Fprintf(w, "accept latency\tp50 %.1f ms, p99 %.1f ms\n", r.AcceptP50Ms, r.AcceptP99Ms)
	fmt.Fprintf(w, "end to end\tp50 %.1f ms, p99 %.1f ms\n", r.EndToEndP50Ms, r.EndToEndP99Ms)
	r.PeerFigures.writeLine(w)
	fmt.Fprintf(w, "completion\t%.2f s (from the first acceptance to the last final state)\n", r.CompletionSeconds)
	if r.OpenLoopSeconds != nil {
		r.OpenLoopFigures.writeLines(w, r.Requested)
	}
	fmt.Fprintf(w, "peak RSS\t%.1f MiB (the largest serve process)\n", float64(r.PeakRSSBytes)/(1<<20))
	fmt.Fprintf(w, "serve CPU\t%.1f µs per message\n", r.ServeCPUUsPerMessage)
	if r.DatabaseCPUUsPerMessage != nil {
		fmt.Fprintf(w, "database CPU\t%.1f µs per message\n", *r.DatabaseCPUUsPerMessage)
	}
	fmt.Fprintf(w, "duplicates\t%d\n", r.Duplicates)
	fmt.Fprintf(w, "receipts failed\t%d (the mock gateway gave up posting them)\n", r.ReceiptsFailed)
	fmt.Fprintf(w, "store writer\t%d transactions, %.1f requests each on average\n", r.WriterBatches, r.WriterMeanBatch)
	fmt.Fprintf(w, "gave way\t%.1f s (the dispatcher held one claim while the burst had the CPU)\n", r.GivenWaySeconds)
	fmt.Fprintf(w, "duration\t%.1f s\n", r.DurationSeconds)
	fmt.Fprintf(w, "process CPU\t%.1f µs per message (the bench itself: callers, stand-ins, receiver)\n", r.ProcessCPUUsPerMessage)
	if r.Events.Received > 0 || r.EventsRefused > 0 || r.EventsPending > 0 {
		r.Events.writeLine(w)
	}
	fmt.Fprintf(w, "load average\t%.2f (one minute, when the run ended)\n", r.LoadAverage)
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
