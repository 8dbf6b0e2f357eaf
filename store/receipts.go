package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"switchboard/engine"
)

// RecordReceipts matches receipts by (provider, provider reference) in one unit of a writer
// batch. Each receipt must be one the engine admitted (engine.Receipts): a reference, and a
// report that some engine.ReportStep leads to; any other is refused with an error before
// anything is written. For each message holding the reference, the receipt's step is a guarded
// update (the report changes only from one of engine.ReportsBefore(report)): when it moved the
// report, with reported_at now and an audit record "receipt.applied", the receipt is applied;
// when it moved none (duplicate, late, out of order), it is stale. One whose reference no
// message holds yet is unmatched and kept, to be applied when Finish records that reference.
func (s *Store) RecordReceipts(ctx context.Context, provider string, receipts []engine.Receipt, now time.Time) (engine.ReceiptTally, error) {
	if len(receipts) == 0 {
		return engine.ReceiptTally{}, nil
	}
	for i, r := range receipts {
		if r.ProviderReference == "" || !engine.Receivable(r.Report) {
			return engine.ReceiptTally{}, fmt.Errorf("store: record receipts of %s: receipt %d (report %q) can move no report", provider, i, r.Report)
		}
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
	matches, err := b.matchReceipt(o.provider, r.ProviderReference)
	if err != nil {
		return fmt.Errorf("match: %w", err)
	}
	if len(matches) == 0 {
		if err := b.execCached(b.s.q.receipt.keep, o.provider, r.ProviderReference, string(r.Report), r.Code, ms(o.now)); err != nil {
			return fmt.Errorf("keep unmatched: %w", err)
		}
		o.tally.Unmatched++
		return nil
	}
	applied := false
	for _, id := range matches {
		moved, err := b.applyReceipt(id, r.Report, engine.ReceiptReason(r.Report, r.Code), ms(o.now),
			receiptAudit(o.provider, id, r.Report, r.Code, o.now), o.now)
		if err != nil {
			return err
		}
		applied = applied || moved
	}
	if applied {
		o.tally.Applied++
	} else {
		o.tally.Stale++
	}
	return nil
}

// applyReceipt moves a message's report to report, with reported_at reportedAt (ms) and the
// reason the receipt leaves it with, as a guarded update (only from a report that report is a
// step forward from), and journals it when it moved: two statements, or one where the dialect
// folds them (PostgreSQL). It reports whether the report moved.
func (b *batch) applyReceipt(id string, report engine.Report, reason engine.Reason, reportedAt int64, audit engine.AuditEntry, now time.Time) (bool, error) {
	q := &b.s.q.receipt
	if q.applyJournaled == nil {
		n, err := b.execN(q.applyReport[report], reportedAt, ms(now), reason.Code, string(reason.By), id)
		if err != nil {
			return false, fmt.Errorf("apply: %w", err)
		}
		if n == 0 {
			return false, nil
		}
		b.messageChanged(id)
		return true, b.audit(audit)
	}
	args, next := b.auditRow(audit)
	args = append([]any{reportedAt, ms(now), reason.Code, string(reason.By), id}, args...)
	if cur, known := b.reports[id]; known && b.pipelines() && cur.Advances(report) {
		b.queueReceipt(id, report, q.applyJournaled[report], q.applyMany[report], args, next)
		return true, nil
	}
	delete(b.reports, id)
	var n int64
	if err := b.get(&n, q.applyJournaled[report], args...); err != nil {
		return false, fmt.Errorf("apply: %w", err)
	}
	if n == 0 {
		return false, nil
	}
	b.chain = next
	b.messageChanged(id)
	return true, nil
}

// queueReceipt is the journaled receipt update queued for the batch's next pipeline, for a
// message whose report the batch knows and the receipt moves: the chain and the known report
// move now; if the update then moved nothing, the batch runs again without pipelining.
func (b *batch) queueReceipt(id string, report engine.Report, query, many string, args []any, next chainState) {
	b.chain = next
	b.reports[id] = report
	var n int64
	b.later(laterRow{
		query: query, args: args, many: many, key: id,
		scan: func(r pgx.Row) error { return r.Scan(&n) },
		then: func() error {
			if n != 1 {
				return fmt.Errorf("store: receipt for %s moved %d reports, where the batch knew it would move one", id, n)
			}
			b.messageChanged(id)
			return nil
		},
	})
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
