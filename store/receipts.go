package store

import (
	"context"
	"fmt"
	"time"

	"switchboard/engine"
)

// RecordReceipts matches receipts by (provider, provider reference) in one unit of a writer
// batch. A receipt that moves a matched message's report forward (engine.Report.Advances) is
// applied, with reported_at now and an audit record "receipt.applied"; a matched one that does
// not (duplicate, late, out of order) is stale; one whose reference no message holds yet is
// unmatched and kept, to be applied when Finish records that reference. A receipt with an
// empty reference or a report other than sent, delivered or undelivered can never apply: it
// counts as unmatched (no reference) or stale, and is not kept.
func (s *Store) RecordReceipts(ctx context.Context, provider string, receipts []engine.Receipt, now time.Time) (engine.ReceiptTally, error) {
	if len(receipts) == 0 {
		return engine.ReceiptTally{}, nil
	}
	o := &receiptsOp{provider: provider, receipts: receipts, now: now}
	if err := s.submit(ctx, o); err != nil {
		return engine.ReceiptTally{}, err
	}
	return o.tally, nil
}

// receiptsOp is one RecordReceipts on its way through the writer.
type receiptsOp struct {
	provider string
	receipts []engine.Receipt
	now      time.Time
	tally    engine.ReceiptTally
}

// matchedMessage is a message holding a receipt's reference.
type matchedMessage struct {
	ID     string `db:"id"`
	Report string `db:"report"`
}

func (o *receiptsOp) apply(b *batch) error {
	run := func() error {
		o.tally = engine.ReceiptTally{}
		for _, r := range o.receipts {
			if err := o.record(b, r); err != nil {
				return fmt.Errorf("store: record receipts of %s: %w", o.provider, err)
			}
		}
		return nil
	}
	// Every failure here is the database's, after writes perhaps: none is clean, so any sends
	// the batch down the savepoint path, where this runs again in a savepoint. The fast path
	// saves a savepoint and its release per delivery report.
	return b.step(run, neverClean)
}

func (o *receiptsOp) record(b *batch, r engine.Receipt) error {
	q := &b.s.q.receipt
	if r.ProviderReference == "" {
		o.tally.Unmatched++
		return nil
	}
	if !engine.ReportNone.Advances(r.Report) {
		o.tally.Stale++
		return nil
	}
	var matches []matchedMessage
	if err := b.selectRows(&matches, q.match, o.provider, r.ProviderReference); err != nil {
		return fmt.Errorf("match: %w", err)
	}
	if len(matches) == 0 {
		if err := b.execCached(q.keep, o.provider, r.ProviderReference, string(r.Report), r.Code, ms(o.now)); err != nil {
			return fmt.Errorf("keep unmatched: %w", err)
		}
		o.tally.Unmatched++
		return nil
	}
	applied := false
	for _, m := range matches {
		if !engine.Report(m.Report).Advances(r.Report) {
			continue
		}
		if err := b.applyReceipt(m.ID, r.Report, receiptAudit(o.provider, m.ID, r.Report, r.Code, o.now), o.now); err != nil {
			return err
		}
		applied = true
	}
	if applied {
		o.tally.Applied++
	} else {
		o.tally.Stale++
	}
	return nil
}

// applyReceipt moves a matched message's report, with reported_at now, and journals it: two
// statements, or one where the dialect folds them (PostgreSQL).
func (b *batch) applyReceipt(id string, report engine.Report, audit engine.AuditEntry, now time.Time) error {
	q := &b.s.q.receipt
	if q.applyJournaled == "" {
		if err := b.execCached(q.applyReport, string(report), ms(now), ms(now), id); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		b.messageChanged(id)
		return b.audit(audit)
	}
	args, next := b.auditRow(audit)
	var n int64
	if err := b.get(&n, q.applyJournaled, append([]any{string(report), ms(now), ms(now), id}, args...)...); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if n != 1 {
		// The match holds the row (locked on PostgreSQL): it cannot be gone.
		return fmt.Errorf("apply: message %s changed under the receipt (%d rows)", id, n)
	}
	b.chain = next
	b.messageChanged(id)
	return nil
}

// receiptAudit is the journal record of an applied receipt. The actor is the provider (its
// id, never a recipient); the outcome is the new report, with the provider's code if any.
func receiptAudit(provider, messageID string, report engine.Report, code string, at time.Time) engine.AuditEntry {
	outcome := string(report)
	if code != "" {
		outcome += " " + code
	}
	return engine.AuditEntry{
		Event:     "receipt.applied",
		Actor:     "provider:" + provider,
		MessageID: messageID,
		Outcome:   outcome,
		At:        at,
	}
}
