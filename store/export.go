package store

import (
	"context"
	"fmt"
	"time"
)

// AuditRecord is one record of the audit journal as stored: its place in its writer's chain,
// what it says, and the macs that chain it (see audit.go for how they are computed, so that
// someone holding the audit key can verify an export on their own).
type AuditRecord struct {
	Writer    string
	Seq       int64
	At        time.Time
	Event     string
	Actor     string
	MessageID string
	Outcome   string
	PrevMAC   []byte
	MAC       []byte
}

// exportSQL is the journal in chain order from a writer's given seq, with a time floor.
const exportSQL = `SELECT seq, at, event, actor, message_id, outcome, prev_mac, mac FROM audit
	WHERE writer = ? AND seq > ? AND at >= ? ORDER BY seq LIMIT ?`

// recordAtSQL is one record by its place.
const recordAtSQL = `SELECT seq, at, event, actor, message_id, outcome, prev_mac, mac FROM audit
	WHERE writer = ? AND seq = ?`

// ExportAudit calls fn with every journal record whose time is at or after since, writer by
// writer (in writer id order) and in chain order within a writer, all from one read snapshot,
// holding at most one page of records in memory. It stops at fn's first error and returns it.
func (s *Store) ExportAudit(ctx context.Context, since time.Time, fn func(AuditRecord) error) error {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return fmt.Errorf("store: export audit: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	page := s.d.rebind(exportSQL)
	floor := ms(since)
	if since.IsZero() {
		floor = 0
	}
	writer := ""
	for {
		var next string
		err := tx.GetContext(ctx, &next, s.q.audit.nextWriter, writer)
		if isNoRows(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("store: export audit: list writers: %w", err)
		}
		writer = next
		after := int64(0)
		for {
			var rows []auditRow
			if err := tx.SelectContext(ctx, &rows, page, writer, after, floor, auditPage); err != nil {
				return fmt.Errorf("store: export audit: read chain %s: %w", writer, err)
			}
			for i := range rows {
				if err := fn(rows[i].record(writer)); err != nil {
					return err
				}
			}
			if len(rows) < auditPage {
				break
			}
			after = rows[len(rows)-1].Seq
		}
	}
}

// AuditRecordAt returns the record at seq of writer's chain, and false when there is none
// (it was removed), for showing the record an AuditBreak names.
func (s *Store) AuditRecordAt(ctx context.Context, writer string, seq int64) (AuditRecord, bool, error) {
	var r auditRow
	err := s.rdb.GetContext(ctx, &r, s.d.rebind(recordAtSQL), writer, seq)
	if isNoRows(err) {
		return AuditRecord{}, false, nil
	}
	if err != nil {
		return AuditRecord{}, false, fmt.Errorf("store: read audit record %s/%d: %w", writer, seq, err)
	}
	return r.record(writer), true, nil
}

// record converts a stored row of writer's chain.
func (r *auditRow) record(writer string) AuditRecord {
	return AuditRecord{Writer: writer, Seq: r.Seq, At: fromMs(r.At), Event: r.Event, Actor: r.Actor,
		MessageID: r.MessageID, Outcome: r.Outcome, PrevMAC: r.PrevMAC, MAC: r.MAC}
}
