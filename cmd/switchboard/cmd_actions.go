package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"switchboard/engine"
)

// The operator actions of `switchboard messages`: retry, cancel and settle, on one message or
// in bulk (--status S --before T), previewed unless --apply. Applied actions are journaled with
// the actor operator-tool.

// actionFlags are the flags every action takes.
type actionFlags struct {
	apply  bool
	status string
	before string
}

func (f *actionFlags) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&f.apply, "apply", false, "apply the change (without it, only show what would change)")
	cmd.Flags().StringVar(&f.status, "status", "", "bulk: act on the messages in this status (with --before, instead of an ID)")
	cmd.Flags().StringVar(&f.before, "before", "", "bulk: accepted before this time (RFC 3339, now, or an age such as 36h or 7d)")
}

// sampleLines is how many changes a bulk preview lists.
const sampleLines = 10

func (a *app) actionCommand(action engine.Action) *cobra.Command {
	var f actionFlags
	short := map[engine.Action]string{
		engine.ActionRetry:  "Queue a failed message again in a new generation",
		engine.ActionCancel: "Cancel a queued message (also one waiting for a retry)",
	}[action]
	cmd := &cobra.Command{
		Use:   string(action) + " (ID | --status S --before T) [--apply]",
		Short: short,
		Args:  maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runAction(cmd.Context(), action, action.Verb(), args, f)
		},
	}
	f.register(cmd)
	return cmd
}

func (a *app) settleCommand() *cobra.Command {
	var f actionFlags
	var outcome string
	cmd := &cobra.Command{
		Use:   "settle (ID | --status unknown --before T) --outcome sent|not-sent [--apply]",
		Short: "Settle a message held in unknown: it was sent (submitted) or not (queued, new generation)",
		Args:  maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			action, err := engine.SettleAction(outcome)
			if err != nil {
				return usageError(errors.New("--outcome must be sent or not-sent"))
			}
			return a.runAction(cmd.Context(), action, "settle --outcome "+outcome, args, f)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&outcome, "outcome", "", "what happened: sent or not-sent")
	return cmd
}

// changeLine is one change in JSON output.
type changeLine struct {
	Action     engine.Action `json:"action"`
	ID         string        `json:"id"`
	From       string        `json:"from"`
	To         string        `json:"to"`
	Generation int           `json:"generation"`
	PastExpiry bool          `json:"pastExpiry,omitempty"`
}

func toLine(c engine.Change) changeLine {
	return changeLine{Action: c.Action, ID: c.MessageID, From: string(c.From), To: string(c.To),
		Generation: c.Generation, PastExpiry: c.PastExpiry}
}

// runAction checks the form (one ID, or --status and --before) and runs the action.
func (a *app) runAction(ctx context.Context, action engine.Action, label string, args []string, f actionFlags) error {
	bulk := f.status != "" || f.before != ""
	switch {
	case len(args) == 1 && !bulk:
	case len(args) == 0 && f.status != "" && f.before != "":
	default:
		return usageError(errors.New("give one message ID, or --status S and --before T for a bulk action"))
	}
	env, err := a.openOps(ctx)
	if err != nil {
		return err
	}
	defer env.close()
	op, err := engine.NewOperator(engine.OperatorConfig{Store: env.store, Package: env.pkg, Clock: env.clock})
	if err != nil {
		return err
	}
	if !bulk {
		return a.actOne(ctx, op, action, args[0], f.apply)
	}
	before, err := parseTime("before", f.before, env.clock.Now())
	if err != nil {
		return err
	}
	sel := engine.Selection{Status: f.status, Before: before}
	label = fmt.Sprintf("%s --status %s --before %s", label, f.status, timeText(before))
	if f.apply {
		return a.applyBulk(ctx, op, action, sel, label)
	}
	return a.previewBulk(ctx, op, action, sel, label)
}

// actOne previews or applies action on one message.
func (a *app) actOne(ctx context.Context, op *engine.Operator, action engine.Action, id string, apply bool) error {
	var c engine.Change
	var err error
	if apply {
		_, c, err = op.Apply(ctx, action, id, engine.ActorOperatorTool)
	} else {
		c, err = op.Preview(ctx, action, id)
	}
	if err != nil {
		return refusal(err, id)
	}
	if a.json() {
		return a.printJSON(map[string]any{"ok": true, "applied": apply, "changes": []changeLine{toLine(c)}})
	}
	if apply {
		fmt.Fprintf(a.stdout, "%s: applied\n", c)
		return nil
	}
	fmt.Fprintln(a.stdout, c)
	a.previewHint()
	return nil
}

// previewBulk counts what a bulk action would change and lists the first changes.
func (a *app) previewBulk(ctx context.Context, op *engine.Operator, action engine.Action, sel engine.Selection, label string) error {
	p, err := op.PreviewBulk(ctx, action, sel, sampleLines)
	if err != nil {
		return refusal(err, "messages")
	}
	if a.json() {
		lines := make([]changeLine, 0, len(p.Sample))
		for _, c := range p.Sample {
			lines = append(lines, toLine(c))
		}
		return a.printJSON(map[string]any{"ok": true, "applied": false, "action": action, "matched": p.Matched, "changes": lines})
	}
	fmt.Fprintf(a.stdout, "%s: %d message(s) would change\n", label, p.Matched)
	for _, c := range p.Sample {
		fmt.Fprintln(a.stdout, c)
	}
	if more := p.Matched - int64(len(p.Sample)); more > 0 {
		fmt.Fprintf(a.stdout, "... and %d more\n", more)
	}
	a.previewHint()
	return nil
}

// applyBulk applies a bulk action in bounded batches, reporting progress.
func (a *app) applyBulk(ctx context.Context, op *engine.Operator, action engine.Action, sel engine.Selection, label string) error {
	var prog *progress
	r, err := op.ApplyBulk(ctx, action, sel, engine.ActorOperatorTool, func(done, total int64) {
		if prog == nil {
			prog = a.newProgress(action.Verb(), total)
		}
		prog.set(done, total)
	})
	if prog != nil {
		prog.finish()
	}
	if err != nil {
		// What was applied stays applied: say how far it got before the refusal.
		if !a.json() && r.Applied > 0 {
			fmt.Fprintf(a.stderr, "%s: %d changed before the failure\n", label, r.Applied)
		}
		return refusal(err, "messages")
	}
	if a.json() {
		return a.printJSON(map[string]any{"ok": true, "applied": true, "action": action, "matched": r.Matched,
			"changed": r.Applied, "skipped": r.Skipped, "batches": r.Batches})
	}
	fmt.Fprintf(a.stdout, "%s: %d changed, %d skipped (changed meanwhile), %d batch(es)\n", label, r.Applied, r.Skipped, r.Batches)
	return nil
}

// maxArgs is cobra.MaximumNArgs with a usage exit code.
func maxArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.MaximumNArgs(n)) }
