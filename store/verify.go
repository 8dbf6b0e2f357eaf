package store

import (
	"bytes"
	"context"
	"crypto/hmac"
	"fmt"
	"hash"

	"github.com/jmoiron/sqlx"
)

// BreakKind says how a chain of the audit journal fails to hold.
type BreakKind string

// The ways a chain breaks.
const (
	// BreakChanged: a record (or the chain head) no longer matches its mac.
	BreakChanged BreakKind = "changed"
	// BreakRemoved: records are missing: a gap in seq, records gone from the end of the chain
	// (behind its head), or the chain head gone.
	BreakRemoved BreakKind = "removed"
	// BreakReordered: a record does not link to the record before it (prev_mac), as when two
	// records were swapped.
	BreakReordered BreakKind = "reordered"
)

// AuditBreak is the first record of one writer's chain that does not hold.
type AuditBreak struct {
	Writer string
	Seq    int64 // the failing record, or the first missing one; 0 for the chain head
	Kind   BreakKind
	Detail string
}

// AuditReport is what VerifyAudit found.
type AuditReport struct {
	Writers int          // chains walked
	Records int64        // records that verified
	Breaks  []AuditBreak // the first break of every broken chain, in writer order
}

// OK reports whether every chain holds.
func (r AuditReport) OK() bool { return len(r.Breaks) == 0 }

// auditPage bounds the records VerifyAudit holds in memory at once.
const auditPage = 512

// auditRow is one stored journal record.
type auditRow struct {
	Seq       int64  `db:"seq"`
	At        int64  `db:"at"`
	Event     string `db:"event"`
	Actor     string `db:"actor"`
	MessageID string `db:"message_id"`
	Outcome   string `db:"outcome"`
	PrevMAC   []byte `db:"prev_mac"`
	MAC       []byte `db:"mac"`
}

// headRow is one writer's stored chain head.
type headRow struct {
	Writer    string `db:"writer"`
	StartedAt int64  `db:"started_at"`
	LastSeq   int64  `db:"last_seq"`
	LastMAC   []byte `db:"last_mac"`
	HeadMAC   []byte `db:"head_mac"`
}

// VerifyAudit walks every writer's chain in one read snapshot, in pages of bounded size, and
// reports the first record of each chain that was changed, removed or reordered (see
// BreakKind), checked against Config.AuditKey. The error is for failures to read, not for
// broken chains.
func (s *Store) VerifyAudit(ctx context.Context) (AuditReport, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return AuditReport{}, fmt.Errorf("store: verify audit: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	v := &verifier{ctx: ctx, tx: tx, q: &s.q.audit, mac: newMAC(s.cfg.AuditKey)}
	writer := ""
	for {
		var next string
		err := tx.GetContext(ctx, &next, v.q.nextWriter, writer)
		if isNoRows(err) {
			break
		}
		if err != nil {
			return AuditReport{}, fmt.Errorf("store: verify audit: list writers: %w", err)
		}
		writer = next
		if err := v.chain(writer); err != nil {
			return AuditReport{}, err
		}
	}
	if err := v.orphanHeads(); err != nil {
		return AuditReport{}, err
	}
	return v.report, nil
}

// verifier walks chains inside one read transaction.
type verifier struct {
	ctx    context.Context
	tx     *sqlx.Tx
	q      *auditSQL
	mac    hash.Hash
	report AuditReport
}

func (v *verifier) fail(writer string, seq int64, kind BreakKind, detail string, args ...any) {
	v.report.Breaks = append(v.report.Breaks, AuditBreak{Writer: writer, Seq: seq, Kind: kind, Detail: fmt.Sprintf(detail, args...)})
}

// chain verifies one writer's records, then its head.
func (v *verifier) chain(writer string) error {
	v.report.Writers++
	expected, prev := int64(1), []byte{}
	for {
		var rows []auditRow
		if err := v.tx.SelectContext(v.ctx, &rows, v.q.page, writer, expected-1, auditPage); err != nil {
			return fmt.Errorf("store: verify audit: read chain %s: %w", writer, err)
		}
		for i := range rows {
			r := &rows[i]
			switch {
			case r.Seq != expected:
				v.fail(writer, expected, BreakRemoved, "records %d to %d are missing", expected, r.Seq-1)
				return nil
			case !bytes.Equal(r.PrevMAC, prev):
				v.fail(writer, r.Seq, BreakReordered, "record %d does not follow record %d", r.Seq, r.Seq-1)
				return nil
			}
			rec := auditRecord{writer: writer, seq: r.Seq, at: r.At, event: r.Event, actor: r.Actor, messageID: r.MessageID, outcome: r.Outcome}
			if !hmac.Equal(r.MAC, recordMAC(v.mac, prev, &rec)) {
				v.fail(writer, r.Seq, BreakChanged, "record %d does not match its mac", r.Seq)
				return nil
			}
			prev, expected = r.MAC, expected+1
			v.report.Records++
		}
		if len(rows) < auditPage {
			break
		}
	}
	return v.head(writer, expected-1, prev)
}

// head checks a writer's stored head against the last record found.
func (v *verifier) head(writer string, last int64, lastMAC []byte) error {
	var h headRow
	err := v.tx.GetContext(v.ctx, &h, v.q.head, writer)
	if isNoRows(err) {
		v.fail(writer, 0, BreakRemoved, "the chain head is missing")
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: verify audit: read head of %s: %w", writer, err)
	}
	switch {
	case !hmac.Equal(h.HeadMAC, headMAC(v.mac, writer, h.StartedAt, h.LastSeq, h.LastMAC)):
		v.fail(writer, 0, BreakChanged, "the chain head does not match its mac")
	case h.LastSeq > last:
		v.fail(writer, last+1, BreakRemoved, "records %d to %d are missing from the end", last+1, h.LastSeq)
	case h.LastSeq < last || !bytes.Equal(h.LastMAC, lastMAC):
		v.fail(writer, h.LastSeq, BreakChanged, "the chain head does not match record %d", h.LastSeq)
	}
	return nil
}

// orphanHeads reports heads whose writer has no record left at all.
func (v *verifier) orphanHeads() error {
	after := ""
	for {
		var heads []headRow
		if err := v.tx.SelectContext(v.ctx, &heads, v.q.headsPage, after, auditPage); err != nil {
			return fmt.Errorf("store: verify audit: read heads: %w", err)
		}
		for _, h := range heads {
			var n int
			if err := v.tx.GetContext(v.ctx, &n, v.q.writerAny, h.Writer); err != nil {
				return fmt.Errorf("store: verify audit: read chain %s: %w", h.Writer, err)
			}
			if n == 0 && h.LastSeq > 0 {
				v.report.Writers++
				v.fail(h.Writer, 1, BreakRemoved, "all %d records are missing", h.LastSeq)
			}
		}
		if len(heads) < auditPage {
			return nil
		}
		after = heads[len(heads)-1].Writer
	}
}
