package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"switchboard/engine"
	"switchboard/engine/api"
)

// messagesCommand is `switchboard messages`: read messages and take the operator actions of
// docs/architecture.md, "Message lifecycle" on them.
func (a *app) messagesCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "messages",
		Short: "List and show messages; retry, cancel or settle them (previewed unless --apply)",
	}
	cmd.AddCommand(a.messagesListCommand(), a.messagesShowCommand(),
		a.actionCommand(engine.ActionRetry), a.actionCommand(engine.ActionCancel), a.settleCommand())
	return cmd
}

// listLine is one message of `messages list`: metadata only, never a recipient or content.
type listLine struct {
	ID            string    `json:"id"`
	Status        string    `json:"status"`
	Dispatch      string    `json:"dispatch"`
	Channel       string    `json:"channel"`
	SenderProfile string    `json:"senderProfile"`
	Generation    int       `json:"generation"`
	Attempt       int       `json:"attempt"`
	AcceptedAt    time.Time `json:"acceptedAt"`
	UpdatedAt     time.Time `json:"updatedAt"`
}

func (a *app) messagesListCommand() *cobra.Command {
	var status string
	var limit int
	cmd := &cobra.Command{
		Use:   "list [--status S] [--limit N]",
		Short: "List messages, newest first, one line each (no recipient, no content)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if status != "" && !slices.Contains(engine.Statuses(), status) {
				return usageError(fmt.Errorf("--status must be one of %s", strings.Join(engine.Statuses(), ", ")))
			}
			if limit < 1 || limit > engine.MaxListLimit {
				return usageError(fmt.Errorf("--limit must be between 1 and %d", engine.MaxListLimit))
			}
			env, err := a.openOps(cmd.Context())
			if err != nil {
				return err
			}
			defer env.close()
			page, err := env.store.ListMessages(cmd.Context(), engine.MessageQuery{Status: status, Limit: limit})
			if err != nil {
				return refusal(err, "messages")
			}
			lines := make([]listLine, 0, len(page.Messages))
			for _, m := range page.Messages {
				lines = append(lines, listLine{ID: m.ID, Status: m.Status(), Dispatch: string(m.Dispatch),
					Channel: string(m.Channel), SenderProfile: m.SenderProfile, Generation: m.Generation,
					Attempt: m.Attempt, AcceptedAt: m.AcceptedAt, UpdatedAt: m.UpdatedAt})
			}
			return a.printList(lines)
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only messages in this status")
	cmd.Flags().IntVar(&limit, "limit", 50, fmt.Sprintf("at most this many messages (1 to %d)", engine.MaxListLimit))
	return cmd
}

func (a *app) printList(lines []listLine) error {
	if a.json() {
		return a.printJSON(map[string]any{"ok": true, "messages": lines})
	}
	w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATUS\tDISPATCH\tCHANNEL\tSENDER PROFILE\tGENERATION\tATTEMPT\tACCEPTED\tUPDATED")
	for _, l := range lines {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", termSafe(l.ID), termSafe(l.Status),
			termSafe(l.Dispatch), termSafe(l.Channel), termSafe(l.SenderProfile), l.Generation, l.Attempt, timeText(l.AcceptedAt), timeText(l.UpdatedAt))
	}
	return w.Flush()
}

// operatorView is `messages show`: the message view (docs/api.md, "The message view") with what an operator
// also needs (providers and their references, the failure code, final and erasure times).
type operatorView struct {
	api.MessageView
	Provider          string            `json:"provider,omitempty"`
	ProviderReference string            `json:"providerReference,omitempty"`
	DispatchCode      string            `json:"dispatchCode,omitempty"`
	FinalAt           *time.Time        `json:"finalAt,omitempty"`
	PayloadErasedAt   *time.Time        `json:"payloadErasedAt,omitempty"`
	Attempts          []operatorAttempt `json:"attempts"`
}

// operatorAttempt is one attempt with its provider and reference.
type operatorAttempt struct {
	api.AttemptView
	Provider          string `json:"provider,omitempty"`
	ProviderReference string `json:"providerReference,omitempty"`
}

func newOperatorView(m *engine.Message) operatorView {
	v := operatorView{MessageView: api.NewMessageView(m, true), Provider: m.Provider, ProviderReference: m.ProviderRef,
		DispatchCode: m.DispatchCode, FinalAt: m.FinalAt, PayloadErasedAt: m.PayloadErasedAt,
		Attempts: make([]operatorAttempt, 0, len(m.Attempts))}
	for i, at := range m.Attempts {
		v.Attempts = append(v.Attempts, operatorAttempt{AttemptView: v.MessageView.Attempts[i],
			Provider: at.Provider, ProviderReference: at.ProviderRef})
	}
	return v
}

func (a *app) messagesShowCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "show ID",
		Short: "Show one message with its attempts, outcome codes and provider references",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := a.openOps(cmd.Context())
			if err != nil {
				return err
			}
			defer env.close()
			m, err := env.store.Message(cmd.Context(), args[0])
			if err != nil {
				return refusal(err, args[0])
			}
			v := newOperatorView(m)
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "message": v})
			}
			a.printShow(&v)
			return nil
		},
	}
}

func (a *app) printShow(v *operatorView) {
	w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	row := func(k, val string) {
		if val != "" {
			fmt.Fprintf(w, "%s:\t%s\n", k, termSafe(val))
		}
	}
	opt := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return timeText(*t)
	}
	row("id", v.ID)
	row("status", v.Status)
	row("dispatch", v.Dispatch)
	row("report", v.Report)
	row("reported at", opt(v.ReportedAt))
	if v.Reason != nil {
		row("reason", v.Reason.Code+" (by "+v.Reason.By+")")
	}
	row("channel", v.Channel)
	row("sender profile", v.SenderProfile)
	for kind := range v.To {
		row("to", kind+" (redacted)")
	}
	if v.Template != nil {
		row("template", v.Template.ID+" "+v.Template.Version)
	}
	row("correlation id", v.CorrelationID)
	row("provider", v.Provider)
	row("provider reference", v.ProviderReference)
	row("dispatch code", v.DispatchCode)
	row("generation", fmt.Sprint(v.Generation))
	row("accepted at", timeText(v.AcceptedAt))
	row("not before", opt(v.NotBefore))
	row("expires at", timeText(v.ExpiresAt))
	row("updated at", timeText(v.UpdatedAt))
	row("final at", opt(v.FinalAt))
	row("payload erased at", opt(v.PayloadErasedAt))
	_ = w.Flush()
	if len(v.Attempts) == 0 {
		fmt.Fprintln(a.stdout, "attempts: none")
		return
	}
	fmt.Fprintln(a.stdout, "attempts:")
	w = tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  GENERATION\tATTEMPT\tOUTCOME\tCODE\tPROVIDER\tREFERENCE\tSTARTED\tFINISHED")
	for _, at := range v.Attempts {
		fmt.Fprintf(w, "  %d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", at.Generation, at.Attempt, termSafe(at.Outcome),
			dash(at.Code), dash(at.Provider), dash(at.ProviderReference), timeText(at.StartedAt), dash(opt(at.FinishedAt)))
	}
	_ = w.Flush()
}

// dash is s for a table cell, made terminal-safe, or "-" when it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return termSafe(s)
}

// refusal turns an engine or store error into the command's error: a Problem is a refusal
// (exit 1) naming path, anything else a database that could not answer (exit 3).
func refusal(err error, path string) error {
	var p *engine.Problem
	if errors.As(err, &p) && p.Code != engine.CodeServiceUnavailable {
		return &cliError{exit: exitRefused, diags: []diagnostic{{Code: p.Code, Path: path, Message: p.Detail}}, cause: err}
	}
	return environment("database.unavailable", path, err)
}
