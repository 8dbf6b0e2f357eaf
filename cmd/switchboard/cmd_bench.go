package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
)

// benchResult is the outcome of a run; its JSON form is SPEC section 10's object, with a few
// members more that say what was run.
type benchResult struct {
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
}

func (a *app) benchCommand() *cobra.Command {
	cfg := benchConfig{}
	cmd := &cobra.Command{
		Use:   "bench [--messages N] [--callers C] [--channel sms|email|peer|mixed] [--gateway-latency D] [--rate R] [--database URL] [--instances N] [--load wrk]",
		Short: "Measure a whole stack on loopback: accept and end-to-end throughput, latency, memory",
		Long: "bench copies the package into a temporary folder, starts the dev stand-ins (mock SMS gateway\n" +
			"posting signed receipts, SMTP sink, companion peer) and the stack in serve processes on loopback\n" +
			"(SQLite in the folder, or a fresh schema of the PostgreSQL database --database names), submits\n" +
			"messages through the HTTP API with real tokens from concurrent callers (or from wrk, with\n" +
			"--load wrk), waits until every accepted message is final, and prints its figures, with the CPU\n" +
			"time the serve processes and the database server spent per message. docs/benchmarks.md\n" +
			"describes the scenarios, the flags and every figure.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("bench takes no arguments"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := cfg.validate(); err != nil {
				return err
			}
			return a.bench(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Messages, "messages", 10000, "messages to submit")
	f.IntVar(&cfg.Callers, "callers", 32, "concurrent API callers")
	f.StringVar(&cfg.Channel, "channel", "sms", "sms, email, peer, or mixed (round robin over the three)")
	f.DurationVar(&cfg.GatewayLatency, "gateway-latency", 0, "how long the mock SMS gateway takes to answer")
	f.DurationVar(&cfg.ReceiptDelay, "receipt-delay", 0, "how long after accepting the mock gateway posts the signed receipt")
	f.Float64Var(&cfg.Rate, "rate", 0, "submissions per second over all callers (open loop); 0 for a closed loop")
	f.IntVar(&cfg.Concurrency, "concurrency", 160, "dispatch.concurrency: dispatcher workers")
	f.StringVar(&cfg.Package, "package", "examples/quickstart", "the package to benchmark (copied, never written)")
	f.StringVar(&cfg.Out, "out", "", "folder for the raw samples (samples.csv) and a chart (latency.png)")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the first serve process, from its start to its stop, to this file, for go tool pprof")
	f.DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "how long to wait, after the last submission, for every message to become final")
	f.StringVar(&cfg.Database, "database", "", "run on this PostgreSQL database (postgres://…), in a fresh schema per run, instead of SQLite")
	f.IntVar(&cfg.Instances, "instances", 1, "serve processes sharing the database (more than one needs --database)")
	f.StringVar(&cfg.Load, "load", "", "wrk: submit from wrk (a separate load generator) instead of the bench's own callers")
	return cmd
}

// validate refuses flag values the run cannot honour (exit 2).
func (c benchConfig) validate() error {
	switch {
	case c.Messages < 1:
		return usageError(fmt.Errorf("--messages must be at least 1"))
	case c.Callers < 1:
		return usageError(fmt.Errorf("--callers must be at least 1"))
	case c.Channel != "sms" && c.Channel != "email" && c.Channel != "peer" && c.Channel != "mixed":
		return usageError(fmt.Errorf("--channel must be sms, email, peer or mixed"))
	case c.GatewayLatency < 0 || c.ReceiptDelay < 0:
		return usageError(fmt.Errorf("--gateway-latency and --receipt-delay must not be negative"))
	case c.Rate < 0:
		return usageError(fmt.Errorf("--rate must not be negative"))
	case c.Concurrency < 1:
		return usageError(fmt.Errorf("--concurrency must be at least 1"))
	case c.Timeout <= 0:
		return usageError(fmt.Errorf("--timeout must be positive"))
	case c.Instances < 1:
		return usageError(fmt.Errorf("--instances must be at least 1"))
	case c.Instances > 1 && c.Database == "":
		return usageError(fmt.Errorf("--instances above 1 needs --database: several serve processes share only PostgreSQL"))
	case c.Load != "" && c.Load != "wrk":
		return usageError(fmt.Errorf("--load must be wrk"))
	case c.Load == "wrk" && c.Rate > 0:
		return usageError(fmt.Errorf("--load wrk runs a closed loop: it takes no --rate"))
	case c.Load == "wrk" && c.Channel == "mixed":
		return usageError(fmt.Errorf("--load wrk sends one submission body: it takes one channel, not mixed"))
	}
	return nil
}

// bench runs one measurement and prints it. A run that lost or duplicated a message, or had a
// submission refused, still prints its figures, then exits 1.
func (a *app) bench(ctx context.Context, cfg benchConfig) error {
	getenv := func(k string) string {
		if v := a.getenv(k); v != "" || k != "SWITCHBOARD_LOG" {
			return v
		}
		return "warn" // the stack's info logs would drown the figures
	}
	log := newLogger(a.stderr, getenv)
	e, err := startBench(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer e.close()
	companion := ""
	if e.companion != nil {
		companion = e.companion.id
	}
	bodies, err := benchBodies(e.pkg, companion, benchChannels(cfg.Channel))
	if err != nil {
		return err
	}
	bar := &progress{}
	if f, ok := a.stderr.(*os.File); ok && !a.json() && term.IsTerminal(int(f.Fd())) {
		bar = a.newProgress("dispatched", int64(cfg.Messages))
	}
	pids := e.serve.pids()
	serveBefore := processesCPU(pids)
	if e.db != nil {
		if err := e.db.observe(ctx); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	var accepted atomic.Int64
	loadDone := make(chan struct{})
	var samples []benchSample
	var start time.Time
	var loadErr error
	go func() {
		defer close(loadDone)
		if cfg.Load == "wrk" {
			samples, start, loadErr = e.loadWrk(ctx, cfg, bodies, &accepted)
			return
		}
		samples, start = e.load(ctx, cfg, bodies, &accepted)
	}()
	deadline, err := e.waitSettled(ctx, loadDone, &accepted, cfg.Timeout,
		func(n int64) { bar.set(n, int64(cfg.Messages)) })
	bar.finish()
	<-loadDone
	// The run's cost: everything the instances and the database did from the first submission
	// until every message was final (the final reads below are not part of it).
	serveCPU := processesCPU(pids) - serveBefore
	if e.db != nil {
		if oerr := e.db.observe(ctx); oerr != nil && err == nil {
			err = oerr
		}
	}
	if err == nil {
		err = loadErr
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := e.readFinal(ctx, samples, min(cfg.Callers, 16), deadline); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if cfg.Load == "wrk" {
		samples = wrkAcceptTimes(samples)
	}
	dups, err := e.duplicates(ctx)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	r := summarize(cfg, samples, start, dups, processPeakRSS(pids))
	if cfg.Load == "wrk" {
		r.AcceptP50Ms, r.AcceptP99Ms = e.wrkLatency.p50, e.wrkLatency.p99
	}
	r.ReceiptsFailed = e.receiptsFailed()
	r.Database, r.Instances, r.Load = "sqlite", cfg.Instances, "bench"
	if e.db != nil {
		r.Database = "postgres"
	}
	if cfg.Load != "" {
		r.Load = cfg.Load
	}
	if r.Messages > 0 {
		r.ServeCPUUsPerMessage = math.Round(float64(serveCPU.Microseconds())/float64(r.Messages)*10) / 10
		if e.db != nil && e.db.local() {
			v := math.Round(float64(e.db.cpu().Microseconds())/float64(r.Messages)*10) / 10
			r.DatabaseCPUUsPerMessage = &v
		}
	}
	if batches, err := e.serve.metric(ctx, "switchboard_store_transactions_total"); err == nil && batches > 0 {
		requests, _ := e.serve.metric(ctx, "switchboard_store_requests_total")
		r.WriterBatches, r.WriterMeanBatch = int64(batches), math.Round(requests/batches*10)/10
	}
	if gw, err := e.serve.metric(ctx, "switchboard_dispatch_give_way_seconds_total"); err == nil {
		r.GivenWaySeconds = math.Round(gw*10) / 10
	}
	r.LoadAverage = loadAverage()
	if cfg.Out != "" {
		if err := writeBenchOut(cfg.Out, samples, start); err != nil {
			return environment("bench.unwritable", cfg.Out, err)
		}
	}
	if a.json() {
		if err := a.printJSON(r); err != nil {
			return err
		}
	} else {
		a.printBench(r)
	}
	if !r.OK {
		return refused("bench.incomplete", "-", fmt.Sprintf("%d lost, %d duplicated, %d refused, %d failed", r.Lost, r.Duplicates, r.Refused, r.Failed))
	}
	return nil
}

// printBench writes the human table.
func (a *app) printBench(r benchResult) {
	w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(w, "scenario\t%d %s message(s), %d caller(s) (%s), gateway latency %gms, concurrency %d\n",
		r.Requested, r.Channel, r.Callers, r.Load, r.GatewayLatencyMs, r.Concurrency)
	fmt.Fprintf(w, "stack\t%d serve process(es) on %s\n", r.Instances, r.Database)
	fmt.Fprintf(w, "accepted\t%d (%d refused) at %.1f/s\n", r.Messages, r.Refused, r.AcceptedPerSecond)
	fmt.Fprintf(w, "final\t%d delivered, %d failed, %d lost; delivered end to end at %.1f/s\n",
		r.Delivered, r.Failed, r.Lost, r.DeliveredPerSecond)
	fmt.Fprintf(w, "accept latency\tp50 %.1f ms, p99 %.1f ms\n", r.AcceptP50Ms, r.AcceptP99Ms)
	fmt.Fprintf(w, "end to end\tp50 %.1f ms, p99 %.1f ms\n", r.EndToEndP50Ms, r.EndToEndP99Ms)
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
	fmt.Fprintf(w, "load average\t%.2f (one minute, when the run ended)\n", r.LoadAverage)
	_ = w.Flush()
}
