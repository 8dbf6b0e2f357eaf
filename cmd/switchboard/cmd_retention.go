package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"switchboard/engine"
	"switchboard/engine/runtime"
)

// `switchboard retention erase-expired`, and the hourly sweep serve runs (docs/operations.md, "Retention and erasure").

// retentionPolicy is the runtime file's retention as the engine takes it.
func retentionPolicy(r runtime.Retention) engine.RetentionPolicy {
	return engine.RetentionPolicy{PayloadDays: r.PayloadDays, RecordDays: r.RecordDays, EventDays: r.EventDays,
		SubmissionReceiptDays: r.SubmissionReceiptDays}
}

// startRetention starts the hourly sweep (the first one at once) and returns the function that
// stops it and waits for it, which must run before the store closes. A policy the engine
// refuses (the runtime loader already checks it) is logged and leaves serve without sweeps.
func (s *stack) startRetention(ctx context.Context) (stop func()) {
	r, err := engine.NewRetention(engine.RetentionConfig{Store: s.store, Clock: s.clock, Logger: s.log,
		Policy: retentionPolicy(s.rt.Retention), Observe: s.metrics.observeErasure,
		Swept: func(engine.RetentionReport) { s.metrics.observeSweep(s.clock.Now()) }})
	if err != nil {
		s.log.Error("retention sweeps are off", "err", err)
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	return func() { cancel(); <-done }
}

// retentionLine is one kind in the output of erase-expired.
type retentionLine struct {
	Kind    engine.EraseKind `json:"kind"`
	Cutoff  time.Time        `json:"cutoff"`
	Count   int64            `json:"count"`
	Batches int              `json:"batches,omitempty"`
}

func (a *app) retentionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "retention",
		Short: "Erase what the retention of the runtime file no longer allows to keep",
	}
	cmd.AddCommand(a.eraseExpiredCommand())
	return cmd
}

func (a *app) eraseExpiredCommand() *cobra.Command {
	var before string
	var apply bool
	cmd := &cobra.Command{
		Use:   "erase-expired [--before T] [--apply]",
		Short: "Show (or with --apply erase, in batches of 1,000) what expired by --before (default now)",
		Long: "Payloads and recipients of final messages go payloadDays after they became final, their\n" +
			"records recordDays after, submission receipts submissionReceiptDays after acceptance (the\n" +
			"key stays spent and answers 410). Queued, sending and unknown messages are never erased.\n" +
			"A cutoff in the future is refused.",
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := a.openOps(cmd.Context())
			if err != nil {
				return err
			}
			defer env.close()
			at := env.clock.Now()
			if before != "" {
				if at, err = parseTime("before", before, env.clock.Now()); err != nil {
					return err
				}
			}
			r, err := engine.NewRetention(engine.RetentionConfig{Store: env.store, Clock: env.clock,
				Policy: retentionPolicy(env.rt.Retention), Actor: engine.ActorOperatorTool})
			if err != nil {
				return refused("runtime.invalid", env.rt.Path, err.Error())
			}
			var rep engine.RetentionReport
			if apply {
				prog := a.newProgress("erase-expired", -1) // -1: no total known, a spinner
				rep, err = r.Erase(cmd.Context(), at, func(k engine.EraseKind, n int) { prog.step(string(k), n) })
				prog.finish()
			} else {
				rep, err = r.Preview(cmd.Context(), at)
			}
			if err != nil {
				if apply && rep.Total() > 0 && !a.json() {
					a.printRetention(rep, true)
				}
				if errors.Is(err, engine.ErrSweepBusy) {
					// Another instance on the shared database is sweeping: nothing was erased.
					return environment("retention.busy", "retention", err)
				}
				return refusal(err, "retention")
			}
			if a.json() {
				lines := make([]retentionLine, 0, len(rep.Steps))
				for _, s := range rep.Steps {
					lines = append(lines, retentionLine{Kind: s.Kind, Cutoff: s.Cutoff, Count: s.Count, Batches: s.Batches})
				}
				return a.printJSON(map[string]any{"ok": true, "applied": apply, "before": rep.Before, "total": rep.Total(), "kinds": lines})
			}
			a.printRetention(rep, apply)
			if !apply {
				a.previewHint()
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "erase what expired by this time (RFC 3339, now, or an age such as 7d); default now")
	cmd.Flags().BoolVar(&apply, "apply", false, "erase (without it, only count what would be erased)")
	return cmd
}

func (a *app) printRetention(rep engine.RetentionReport, applied bool) {
	verb := "would erase"
	if applied {
		verb = "erased"
	}
	fmt.Fprintf(a.stdout, "retention as of %s: %s %d item(s)\n", timeText(rep.Before), verb, rep.Total())
	w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	for _, s := range rep.Steps {
		fmt.Fprintf(w, "  %s\t%d\tcutoff %s\n", s.Kind, s.Count, timeText(s.Cutoff))
	}
	_ = w.Flush()
}
