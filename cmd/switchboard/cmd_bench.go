package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"switchboard/cmd/switchboard/internal/bench"
	"switchboard/engine/runtime"
)

func (a *app) benchCommand() *cobra.Command {
	cfg := bench.Config{}
	cmd := &cobra.Command{
		Use:   "bench [--messages N | --rate R --duration D] [--callers C] [--channel sms|email|peer|mixed] [--gateway-latency D] [--database URL] [--instances N] [--load wrk] [--admission give-way|off] [--peer-protocol one-shot|pooled] [--peer-relay]",
		Short: "Measure a whole stack on loopback: accept and end-to-end throughput, latency, memory",
		Long: "bench copies the package into a temporary folder, starts the dev stand-ins (mock SMS gateway\n" +
			"posting signed receipts, SMTP sink, companion peer) and the stack in serve processes on loopback\n" +
			"(SQLite in the folder, or a fresh schema of the PostgreSQL database --database names), submits\n" +
			"messages through the HTTP API with real tokens from concurrent callers (or from wrk, with\n" +
			"--load wrk), in a burst of --messages or, with --rate and --duration, in an open loop at a fixed\n" +
			"rate, waits until every accepted message is final, and prints its figures: accepted and\n" +
			"delivered per second, the time from the first acceptance to the last final state, accept and\n" +
			"end-to-end latency, peak RSS, lost and duplicated messages, and the CPU time the serve processes\n" +
			"and the database server spent per message. docs/benchmarks.md describes the scenarios, the\n" +
			"flags and every figure.",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError(fmt.Errorf("bench takes no arguments"))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.OpenLoop() && cmd.Flags().Changed("messages") {
				return usageError(errors.New("--messages is the size of a burst: an open-loop run (--rate, --duration) submits rate × duration messages"))
			}
			if err := cfg.Validate(); err != nil {
				return usageError(err)
			}
			return a.bench(cmd.Context(), cfg)
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Messages, "messages", 10000, "messages to submit in a burst (not with --rate)")
	f.IntVar(&cfg.Callers, "callers", 32, "concurrent API callers")
	f.StringVar(&cfg.Channel, "channel", "sms", "sms, email, peer, or mixed (round robin over the three)")
	f.DurationVar(&cfg.GatewayLatency, "gateway-latency", 0, "how long the mock SMS gateway takes to answer")
	f.DurationVar(&cfg.ReceiptDelay, "receipt-delay", 0, "how long after accepting the mock gateway posts the signed receipt")
	f.Float64Var(&cfg.Rate, "rate", 0, "with --duration: submit this many messages a second, on a fixed schedule (open loop), instead of a burst")
	f.DurationVar(&cfg.Duration, "duration", 0, "with --rate: how long the open loop submits")
	f.IntVar(&cfg.Concurrency, "concurrency", runtime.DefaultConcurrency, "dispatch.concurrency: dispatcher workers (the default is serve's)")
	f.StringVar(&cfg.Package, "package", "examples/quickstart", "the package to benchmark (copied, never written)")
	f.StringVar(&cfg.Out, "out", "", "folder for the raw samples (samples.csv) and a chart (latency.png)")
	f.StringVar(&cfg.CPUProfile, "cpuprofile", "", "write a CPU profile of the first serve process, from its start to its stop, to this file, for go tool pprof")
	f.DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "how long to wait, after the last submission, for every message to become final")
	f.StringVar(&cfg.Database, "database", "", "run on this PostgreSQL database (postgres://…), in a fresh schema per run, instead of SQLite")
	f.IntVar(&cfg.Instances, "instances", 1, "serve processes sharing the database (more than one needs --database)")
	f.StringVar(&cfg.Load, "load", "", "wrk: submit from wrk (a separate load generator) instead of the bench's own callers")
	f.BoolVar(&cfg.Webhooks, "webhooks", false, "subscribe a local receiver to message.status events and report eventsPerSecond, eventLagP99Ms and serveCpuUsPerEvent")
	f.StringVar(&cfg.Admission, "admission", bench.AdmissionGiveWay, "the serve processes' admission policy: give-way (what serve runs) or off (none), to compare a burst's completion without it")
	f.StringVar(&cfg.PeerProtocol, "peer-protocol", "", "with --channel peer or mixed: one-shot (a stream per message, when not given) or pooled (long-lived framed streams, at both ends)")
	f.BoolVar(&cfg.PeerRelay, "peer-relay", false, "with --channel peer or mixed: reach the companion peer only through a circuit relay on loopback")
	return cmd
}

// bench runs one measurement and prints it. A run that lost or duplicated a message, or had a
// submission refused, still prints its figures, then exits 1.
func (a *app) bench(ctx context.Context, cfg bench.Config) error {
	getenv := func(k string) string {
		if v := a.getenv(k); v != "" || k != "SWITCHBOARD_LOG" {
			return v
		}
		return "warn" // the stack's info logs would drown the figures
	}
	log := newLogger(a.stderr, getenv)
	bar := &progress{}
	if f, ok := a.stderr.(*os.File); ok && !a.json() && term.IsTerminal(int(f.Fd())) {
		bar = a.newProgress("dispatched", int64(cfg.Submissions()))
	}
	r, err := bench.Run(ctx, cfg, startBenchStack, log, bar.set)
	bar.finish()
	if err != nil {
		return benchFailure(err)
	}
	if a.json() {
		if err := a.printJSON(r); err != nil {
			return err
		}
	} else if err := r.WriteTable(a.stdout); err != nil {
		return fmt.Errorf("print the figures: %w", err)
	}
	if !r.OK {
		return refused("bench.incomplete", "-", fmt.Sprintf("%d lost, %d duplicated, %d refused, %d failed", r.Lost, r.Duplicates, r.Refused, r.Failed))
	}
	return nil
}

// benchFailure gives a failure of the bench package its exit code.
func benchFailure(err error) error {
	var be *bench.Error
	if !errors.As(err, &be) {
		return err
	}
	if be.Refused {
		return refused(be.Code, be.Path, be.Err.Error())
	}
	return environment(be.Code, be.Path, be.Err)
}
