package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"switchboard/engine"
	"switchboard/engine/runtime"
)

// runtimeWebhook is one endpoint of the runtime file.
type runtimeWebhook = runtime.Webhook

// `switchboard webhooks list|events|redeliver` (docs/webhooks.md): the outbox's figures and rows,
// read from metadata, and redelivery previewed first like the messages actions.

func (a *app) webhooksCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "webhooks",
		Short: "Read the event outbox of the runtime file's endpoints, and deliver events again",
	}
	cmd.AddCommand(a.webhooksListCommand(), a.webhooksEventsCommand(), a.webhooksRedeliverCommand())
	return cmd
}

// endpointLine is one endpoint in `webhooks list -o json`.
type endpointLine struct {
	ID               string     `json:"id"`
	URL              string     `json:"url"`
	Pending          int64      `json:"pending"`
	Failed           int64      `json:"failed"`
	OldestPendingAge *float64   `json:"oldestPendingAgeSeconds,omitempty"`
	LastSuccess      *time.Time `json:"lastSuccess,omitempty"`
	FailingSince     *time.Time `json:"failingSince,omitempty"`
}

func (a *app) webhooksListCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "Each endpoint: pending and failed events, oldest pending age, last success, failing since",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := a.openOps(cmd.Context())
			if err != nil {
				return err
			}
			defer env.close()
			figures, err := env.store.EventFigures(cmd.Context())
			if err != nil {
				return refusal(err, "webhooks")
			}
			now := env.clock.Now()
			lines := make([]endpointLine, 0, len(env.rt.Webhooks))
			for _, w := range env.rt.Webhooks {
				f := figures[w.ID]
				l := endpointLine{ID: w.ID, URL: w.URL.String(), Pending: f.Pending, Failed: f.Failed}
				if !f.OldestPending.IsZero() {
					age := now.Sub(f.OldestPending).Seconds()
					l.OldestPendingAge = &age
				}
				l.LastSuccess, l.FailingSince = optTime(f.LastSuccess), optTime(f.FailingSince)
				lines = append(lines, l)
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "endpoints": lines})
			}
			w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "ENDPOINT\tPENDING\tFAILED\tOLDEST PENDING\tLAST SUCCESS\tFAILING SINCE\tURL")
			for _, l := range lines {
				oldest := "-"
				if l.OldestPendingAge != nil {
					oldest = (time.Duration(*l.OldestPendingAge * float64(time.Second))).Truncate(time.Second).String()
				}
				fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\t%s\n", l.ID, l.Pending, l.Failed, oldest,
					optText(l.LastSuccess), optText(l.FailingSince), l.URL)
			}
			return w.Flush()
		},
	}
}

// eventLine is one outbox row in `webhooks events -o json`.
type eventLine struct {
	ID                string     `json:"id"`
	Endpoint          string     `json:"endpoint"`
	Type              string     `json:"type"`
	Subject           string     `json:"subject"`
	Sequence          int64      `json:"sequence"`
	Status            string     `json:"status"`
	ChangedAt         time.Time  `json:"changedAt"`
	Attempts          int        `json:"attempts"`
	NextAttemptAt     *time.Time `json:"nextAttemptAt,omitempty"`
	DeliveredSequence int64      `json:"deliveredSequence,omitempty"`
	DeliveredAt       *time.Time `json:"deliveredAt,omitempty"`
	LastAttemptAt     *time.Time `json:"lastAttemptAt,omitempty"`
	LastStatus        int        `json:"lastStatus,omitempty"`
	LastError         string     `json:"lastError,omitempty"`
}

func (a *app) webhooksEventsCommand() *cobra.Command {
	var endpoint, status string
	var limit int
	cmd := &cobra.Command{
		Use:   "events [--endpoint E] [--status pending|delivered|failed] [--limit N]",
		Short: "List events, newest change first (one per message and endpoint: the latest)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > engine.MaxListLimit {
				return usageError(fmt.Errorf("--limit must be between 1 and %d", engine.MaxListLimit))
			}
			var state engine.EventState
			if status != "" {
				st, ok := engine.ParseEventState(status)
				if !ok {
					return usageError(errors.New("--status must be pending, delivered or failed"))
				}
				state = st
			}
			env, err := a.openOps(cmd.Context())
			if err != nil {
				return err
			}
			defer env.close()
			if endpoint != "" && !slices.ContainsFunc(env.rt.Webhooks, func(w runtimeWebhook) bool { return w.ID == endpoint }) {
				return refused("webhook.unknown", endpoint, "the runtime file declares no endpoint with this id")
			}
			rows, err := env.store.ListEvents(cmd.Context(), engine.EventQuery{Endpoint: endpoint, State: state, Limit: limit})
			if err != nil {
				return refusal(err, "webhooks")
			}
			lines := make([]eventLine, len(rows))
			for i, r := range rows {
				seq := r.Sequence
				l := eventLine{ID: engine.EventID(r.Type, r.Subject, seq), Endpoint: r.Endpoint, Type: r.Type,
					Subject: r.Subject, Sequence: seq, Status: string(r.State), ChangedAt: r.ChangedAt, Attempts: r.Attempts,
					DeliveredSequence: r.DeliveredSequence, DeliveredAt: r.DeliveredAt, LastAttemptAt: r.LastAttemptAt,
					LastStatus: r.LastStatus, LastError: r.LastError}
				if r.State == engine.EventPending {
					next := r.NextAttemptAt
					l.NextAttemptAt = &next
				}
				lines[i] = l
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "events": lines})
			}
			w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "EVENT\tENDPOINT\tTYPE\tSUBJECT\tSEQ\tSTATUS\tATTEMPTS\tCHANGED\tLAST ANSWER")
			for _, l := range lines {
				answer := "-"
				switch {
				case l.LastError != "":
					answer = l.LastError
				case l.LastStatus != 0:
					answer = strconv.Itoa(l.LastStatus)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\n", l.ID, l.Endpoint, l.Type, l.Subject, l.Sequence,
					l.Status, l.Attempts, timeText(l.ChangedAt), answer)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "only this endpoint's events")
	cmd.Flags().StringVar(&status, "status", "", "only events in this state: pending, delivered or failed")
	cmd.Flags().IntVar(&limit, "limit", 50, fmt.Sprintf("at most this many (1 to %d)", engine.MaxListLimit))
	return cmd
}

func (a *app) webhooksRedeliverCommand() *cobra.Command {
	var endpoint, since string
	var apply bool
	cmd := &cobra.Command{
		Use:   "redeliver --endpoint E --since T [--apply]",
		Short: "Show (or with --apply make pending again) an endpoint's delivered and failed events changed since T",
		Long: "Each event goes again with its webhook-id, signed afresh, on the retry schedule from its first\n" +
			"attempt; serve delivers them. T is RFC 3339, now, or an age such as 90m or 7d.",
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if endpoint == "" || since == "" {
				return usageError(errors.New("redeliver needs --endpoint and --since"))
			}
			env, err := a.openOps(cmd.Context())
			if err != nil {
				return err
			}
			defer env.close()
			if !slices.ContainsFunc(env.rt.Webhooks, func(w runtimeWebhook) bool { return w.ID == endpoint }) {
				return refused("webhook.unknown", endpoint, "the runtime file declares no endpoint with this id")
			}
			from, err := parseTime("since", since, env.clock.Now())
			if err != nil {
				return err
			}
			count, err := env.store.CountRedeliverable(cmd.Context(), endpoint, from)
			if err != nil {
				return refusal(err, "webhooks")
			}
			done := 0
			if apply {
				for {
					n, err := env.store.Redeliver(cmd.Context(), endpoint, from, env.clock.Now(), engine.MaxEraseBatch,
						engine.AuditEntry{Actor: engine.ActorOperatorTool})
					if err != nil {
						return refusal(err, "webhooks")
					}
					done += n
					if n < engine.MaxEraseBatch {
						break
					}
				}
			}
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "applied": apply, "endpoint": endpoint, "since": from,
					"count": count, "redelivered": done})
			}
			if apply {
				fmt.Fprintf(a.stdout, "%d events of %s made pending again (changed since %s)\n", done, endpoint, timeText(from))
				return nil
			}
			fmt.Fprintf(a.stdout, "%d delivered or failed events of %s changed since %s would go again\n", count, endpoint, timeText(from))
			a.previewHint()
			return nil
		},
	}
	cmd.Flags().StringVar(&endpoint, "endpoint", "", "the endpoint (its id in the runtime file)")
	cmd.Flags().StringVar(&since, "since", "", "events changed at or after this time")
	cmd.Flags().BoolVar(&apply, "apply", false, "make them pending again (without it, only count)")
	return cmd
}

// optTime is t, or nil for the zero time.
func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// optText formats an optional time for people.
func optText(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return timeText(*t)
}
