package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"switchboard/engine"
	"switchboard/engine/api"
	"switchboard/engine/runtime"
)

// inboxCommand is `switchboard inbox`: the messages received, from peers and from gateways
// (docs/api.md, "The inbox"), read from the database next to a running serve.
func (a *app) inboxCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "inbox",
		Short: "Read the messages this gateway received: peer envelopes and inbound SMS, email and chat",
	}
	cmd.AddCommand(a.inboxListCommand())
	return cmd
}

// previewRunes is how much of a text payload a human line shows.
const previewRunes = 60

func (a *app) inboxListCommand() *cobra.Command {
	var after string
	var limit int
	cmd := &cobra.Command{
		Use:   "list [--after CURSOR] [--limit N]",
		Short: "List received messages, from peers and from gateways, oldest first (-o json for whole payloads)",
		Long: "List the inbox, oldest first: the envelopes peers sent to this gateway's peer providers, and the\n" +
			"messages gateways delivered to its http providers (inbound SMS, email, chat), one line each with\n" +
			"its channel and the provider that received it. The same entries as GET /v1/inbox; -o json gives\n" +
			"every member, whole payloads included.",
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 || limit > engine.MaxListLimit {
				return usageError(fmt.Errorf("--limit must be between 1 and %d", engine.MaxListLimit))
			}
			after = strings.ToLower(strings.TrimSpace(after))
			if after != "" && !api.IsInboxCursor(after) {
				return usageError(errors.New("--after must be the next cursor of an earlier listing"))
			}
			if a.config == "" {
				return usageError(errors.New("give the runtime file with --config or SWITCHBOARD_CONFIG"))
			}
			rt, err := runtime.Load(a.config, a.getenv)
			if err != nil {
				return err
			}
			// Never migrates: serve may be running on the database, and a command line tool
			// never builds or upgrades a schema.
			st, _, err := openStore(cmd.Context(), rt, nil, engine.SystemClock{}, newLogger(a.stderr, a.getenv), false, nil)
			if err != nil {
				return err
			}
			defer func() { _ = st.Close() }()
			entries, next, err := st.ListInbox(cmd.Context(), after, limit)
			if err != nil {
				return refusal(err, "inbox")
			}
			page := api.NewInboxPage(entries, next, after)
			if a.json() {
				return a.printJSON(map[string]any{"ok": true, "entries": page.Entries, "next": page.Next})
			}
			return a.printInbox(&page)
		},
	}
	cmd.Flags().StringVar(&after, "after", "", "continue after this cursor (the next of an earlier listing)")
	cmd.Flags().IntVar(&limit, "limit", 50, fmt.Sprintf("at most this many entries (1 to %d)", engine.MaxListLimit))
	return cmd
}

// printInbox writes one line per entry with a short, quoted preview of a text payload, then
// the cursor to read on with.
func (a *app) printInbox(p *api.InboxPage) error {
	if len(p.Entries) == 0 {
		fmt.Fprintln(a.stdout, "no entries")
	} else {
		w := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tCHANNEL\tPROVIDER\tFROM\tPROTOCOL\tMESSAGE ID\tRECEIVED\tBYTES\tPAYLOAD")
		for i := range p.Entries {
			e := &p.Entries[i]
			protocol := e.Protocol
			if protocol == "" { // a gateway's entry
				protocol = "-"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", termSafe(e.ID), termSafe(e.Channel), termSafe(e.Provider),
				termSafe(e.From), termSafe(protocol), strconv.Quote(e.MessageID),
				e.ReceivedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"), e.PayloadBytes, payloadPreview(e))
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	if p.Next != "" {
		next := termSafe(p.Next)
		fmt.Fprintf(a.stdout, "next: %s (read on with --after %s)\n", next, next)
	}
	return nil
}

// payloadPreview is the start of a text payload, quoted with strconv.Quote (the escaping of
// termSafe, within quotes) so that control characters cannot break the table, or what the
// payload is when it is not text.
func payloadPreview(e *api.InboxEntryView) string {
	switch {
	case e.PayloadErased:
		return "(erased)"
	case e.Payload == nil:
		return "(binary; -o json shows payloadBase64)"
	}
	text, n := *e.Payload, 0
	for i := range text { // by byte offset, so that a large payload is not copied
		if n == previewRunes {
			text = text[:i] + "…"
			break
		}
		n++
	}
	return strconv.Quote(text)
}
