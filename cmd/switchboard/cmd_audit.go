package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"switchboard/store"
)

// `switchboard audit`: check and export the HMAC-chained journal (docs/operations.md, "The audit journal").

func (a *app) auditCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Verify or export the audit journal",
	}
	cmd.AddCommand(a.auditVerifyCommand(), a.auditExportCommand())
	return cmd
}

// auditLine is one exported record: JSON lines, macs in hex.
type auditLine struct {
	Writer    string    `json:"writer"`
	Seq       int64     `json:"seq"`
	At        time.Time `json:"at"`
	Event     string    `json:"event"`
	Actor     string    `json:"actor"`
	MessageID string    `json:"messageId,omitempty"`
	Outcome   string    `json:"outcome,omitempty"`
	PrevMAC   string    `json:"prevMac"`
	MAC       string    `json:"mac"`
}

func toAuditLine(r store.AuditRecord) auditLine {
	return auditLine{Writer: r.Writer, Seq: r.Seq, At: r.At, Event: r.Event, Actor: r.Actor,
		MessageID: r.MessageID, Outcome: r.Outcome, PrevMAC: hex.EncodeToString(r.PrevMAC), MAC: hex.EncodeToString(r.MAC)}
}

func (a *app) auditVerifyCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Check every chain of the journal; exit 1 naming the first broken record of each broken chain",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := a.openOps(cmd.Context())
			if err != nil {
				return err
			}
			defer env.close()
			rep, err := env.store.VerifyAudit(cmd.Context())
			if err != nil {
				return environment("database.unavailable", "audit", err)
			}
			if rep.OK() {
				if a.json() {
					return a.printJSON(map[string]any{"ok": true, "chains": rep.Writers, "records": rep.Records})
				}
				fmt.Fprintf(a.stdout, "ok: %d record(s) in %d chain(s) verified\n", rep.Records, rep.Writers)
				return nil
			}
			ce := &cliError{exit: exitRefused}
			for _, b := range rep.Breaks {
				msg := b.Detail
				if b.Seq > 0 {
					r, found, err := env.store.AuditRecordAt(cmd.Context(), b.Writer, b.Seq)
					if err != nil {
						return environment("database.unavailable", "audit", err)
					}
					if found {
						line, _ := json.Marshal(toAuditLine(r))
						msg += "; record " + string(line)
					}
				}
				ce.diags = append(ce.diags, diagnostic{Code: "audit.record-" + string(b.Kind),
					Path: fmt.Sprintf("audit/%s/%d", b.Writer, b.Seq), Message: msg})
			}
			if !a.json() {
				fmt.Fprintf(a.stderr, "%d record(s) in %d chain(s) verified before the break(s)\n", rep.Records, rep.Writers)
			}
			return ce
		},
	}
}

func (a *app) auditExportCommand() *cobra.Command {
	var since string
	cmd := &cobra.Command{
		Use:   "export [--since T]",
		Short: "Write the journal as JSON lines, chain by chain, from --since on",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			env, err := a.openOps(cmd.Context())
			if err != nil {
				return err
			}
			defer env.close()
			var from time.Time
			if since != "" {
				if from, err = parseTime("since", since, env.clock.Now()); err != nil {
					return err
				}
			}
			out := bufio.NewWriter(a.stdout)
			enc := json.NewEncoder(out)
			err = env.store.ExportAudit(cmd.Context(), from, func(r store.AuditRecord) error {
				return enc.Encode(toAuditLine(r))
			})
			if ferr := out.Flush(); err == nil {
				err = ferr
			}
			if err != nil {
				return environment("audit.export-failed", "audit", err)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only records at or after this time (RFC 3339, now, or an age such as 36h or 7d)")
	return cmd
}
