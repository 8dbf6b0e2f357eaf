package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"switchboard/engine"
)

// CountErasable counts, from indexes and metadata only, what EraseBatch calls of kind with
// cutoff would erase in all: for records, the final messages whose final time is at or before
// cutoff, whether or not their payload is gone yet.
func (s *Store) CountErasable(ctx context.Context, kind engine.EraseKind, cutoff time.Time) (int64, error) {
	q := &s.q.retention
	c := ms(cutoff)
	var stmts []string
	switch kind {
	case engine.ErasePayloads:
		stmts = []string{q.payloadCount}
	case engine.EraseRecords:
		stmts = []string{q.erasedCount, q.payloadCount}
	case engine.EraseSubmissionReceipts:
		stmts = []string{q.receiptsCount}
	case engine.EraseProviderReceipts:
		stmts = []string{q.providerReceiptsCount}
	case engine.EraseInboxPayloads:
		stmts = []string{q.inboxPayloadsCount}
	case engine.EraseInboxRecords:
		stmts = []string{q.inboxRecordsCount}
	case engine.EraseWebhookEvents:
		stmts = []string{s.q.events.erasableCount}
	default:
		return 0, fmt.Errorf("store: count erasable: unknown kind %q", kind)
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return 0, fmt.Errorf("store: count erasable %s: %w", kind, err)
	}
	defer func() { _ = tx.Rollback() }()
	var total int64
	for _, st := range stmts {
		var n int64
		if err := tx.GetContext(ctx, &n, st, c); err != nil {
			return 0, fmt.Errorf("store: count erasable %s: %w", kind, err)
		}
		total += n
	}
	return total, nil
}

// EraseBatch erases at most b.Limit items of b.Kind whose clock is at or before b.Cutoff, in
// one writer request (a unit of a batch transaction, committed before the call returns), with
// one audit record "retention.erased" when it erased anything:
//
//   - payloads: deletes the stored payload (recipient and rendered parts) of final messages by
//     final time and sets payloadErasedAt to b.At; the record stays.
//   - records: deletes final messages by final time, with their attempts and any payload left.
//   - submission-receipts: clears the stored answer and the request hash of idempotency records
//     by acceptance time and sets erased_at; the key stays spent (a replay answers 410).
//   - provider-receipts: deletes kept delivery reports by arrival time.
//   - inbox-payloads, inbox-records: the same for received peer messages, by arrival time.
func (s *Store) EraseBatch(ctx context.Context, b engine.EraseBatch) (engine.EraseResult, error) {
	if b.Limit < 1 || b.Limit > engine.MaxEraseBatch {
		return engine.EraseResult{}, fmt.Errorf("store: erase: limit %d is not between 1 and %d", b.Limit, engine.MaxEraseBatch)
	}
	if !slices.Contains(engine.EraseKinds(), b.Kind) {
		return engine.EraseResult{}, fmt.Errorf("store: erase: unknown kind %q", b.Kind)
	}
	if b.At.IsZero() {
		b.At = s.clock.Now()
	}
	o := &eraseOp{q: &s.q.retention, b: b}
	if err := s.submit(ctx, o); err != nil {
		return engine.EraseResult{}, err
	}
	return engine.EraseResult{Erased: o.n}, nil
}

// eraseOp is one EraseBatch on its way through the writer.
type eraseOp struct {
	q *retentionSQL
	b engine.EraseBatch
	n int
}

func (o *eraseOp) apply(b *batch) error {
	return b.unit(func() error {
		n, err := o.erase(b)
		if err != nil {
			return fmt.Errorf("store: erase %s: %w", o.b.Kind, err)
		}
		o.n = n
		if n == 0 {
			return nil
		}
		e := o.b.Audit
		if e.Event == "" {
			e.Event = "retention.erased"
		}
		if e.At.IsZero() {
			e.At = o.b.At
		}
		if e.Outcome == "" {
			e.Outcome = fmt.Sprintf("%s %d erased, cutoff %s", o.b.Kind, n, o.b.Cutoff.UTC().Format(time.RFC3339Nano))
		}
		if err := b.audit(e); err != nil {
			return fmt.Errorf("store: erase %s: %w", o.b.Kind, err)
		}
		return nil
	})
}

// erase does the batch's writes and returns how many items it erased.
func (o *eraseOp) erase(b *batch) (int, error) {
	cut, at, limit := ms(o.b.Cutoff), ms(o.b.At), o.b.Limit
	switch o.b.Kind {
	case engine.ErasePayloads:
		var seqs []int64
		if err := b.selectRows(&seqs, o.q.payloadSelect, cut, limit); err != nil || len(seqs) == 0 {
			return 0, err
		}
		if _, err := b.execIn(o.q.payloadDelete, seqs); err != nil {
			return 0, err
		}
		n, err := b.execIn(o.q.payloadMark, at, seqs)
		return int(n), err
	case engine.EraseRecords:
		var seqs []int64
		if err := b.selectRows(&seqs, o.q.erasedSelect, cut, limit); err != nil {
			return 0, err
		}
		if len(seqs) < limit { // final records whose payload is still there go too
			var more []int64
			if err := b.selectRows(&more, o.q.payloadSelect, cut, limit-len(seqs)); err != nil {
				return 0, err
			}
			seqs = append(seqs, more...)
		}
		if len(seqs) == 0 {
			return 0, nil
		}
		n, err := b.execIn(o.q.recordsDelete, seqs)
		return int(n), err
	case engine.EraseSubmissionReceipts:
		n, err := b.execN(o.q.receiptsErase, []byte{}, at, cut, limit)
		return int(n), err
	case engine.EraseProviderReceipts:
		n, err := b.execN(o.q.providerReceiptsDelete, cut, limit)
		return int(n), err
	case engine.EraseInboxPayloads:
		n, err := b.execN(o.q.inboxPayloadsErase, at, cut, limit)
		return int(n), err
	case engine.EraseInboxRecords:
		n, err := b.execN(o.q.inboxRecordsDelete, cut, limit)
		return int(n), err
	case engine.EraseWebhookEvents:
		var ids []int64
		if err := b.selectRows(&ids, b.s.q.events.eraseSelect, cut, limit); err != nil || len(ids) == 0 {
			return 0, err
		}
		n, err := b.execIn(b.s.q.events.eraseDelete, ids)
		return int(n), err
	}
	return 0, fmt.Errorf("unknown kind %q", o.b.Kind)
}
