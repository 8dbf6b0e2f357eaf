package store

import (
	"context"
	"fmt"
	"time"

	"switchboard/engine"
)

// reconcileWindow is how far back ReconcileReceipts looks for stranded receipts. A receipt is
// stranded only by two transactions that overlap, so seconds would do; an hour also covers a
// database that was unreachable for a while.
const reconcileWindow = time.Hour

// ReceiptReconciler is what the dispatcher is wired with (engine.DispatcherConfig.Reconciler):
// the store itself on PostgreSQL, whose writers run side by side, and nil on SQLite, whose one
// writer never strands a receipt.
func (s *Store) ReceiptReconciler() engine.ReceiptReconciler {
	if s.d.name != "postgres" {
		return nil
	}
	return s
}

// ReconcileReceipts applies kept receipts whose reference a message already holds, up to limit
// messages, and returns how many messages it applied receipts to. On PostgreSQL, writers run
// side by side: a receipt that arrives while another transaction records its reference finds no
// message and is kept, and that transaction, not seeing the uncommitted receipt, consumes
// nothing. The dispatcher calls this at each maintenance pass so that such a receipt is applied
// within a poll interval. On SQLite, whose one writer runs one transaction at a time, it never
// finds anything and returns at once.
func (s *Store) ReconcileReceipts(ctx context.Context, now time.Time, limit int) (int, error) {
	if s.d.name != "postgres" || limit <= 0 {
		return 0, nil
	}
	o := &reconcileOp{now: now, limit: limit}
	if err := s.submit(ctx, o); err != nil {
		return 0, fmt.Errorf("store: reconcile receipts: %w", err)
	}
	return o.applied, nil
}

// reconcileOp is one ReconcileReceipts on its way through the writer.
type reconcileOp struct {
	now     time.Time
	limit   int
	applied int
}

func (o *reconcileOp) apply(b *batch) error {
	return b.unit(func() error {
		o.applied = 0
		var rows []struct {
			ID  string `db:"id"`
			Ref string `db:"provider_ref"`
		}
		if err := b.selectRows(&rows, b.s.q.receipt.stranded, ms(o.now.Add(-reconcileWindow)), o.limit); err != nil {
			return fmt.Errorf("find stranded receipts: %w", err)
		}
		for _, r := range rows {
			if err := b.applyPendingReceipts(r.ID, "", "", r.Ref, o.now); err != nil {
				return fmt.Errorf("message %s: %w", r.ID, err)
			}
			o.applied++
		}
		return nil
	})
}

var _ engine.ReceiptReconciler = (*Store)(nil)
