package store

import (
	"context"
	"fmt"
	"time"

	"switchboard/engine"
)

// ExpireDue moves at most limit queued messages whose expiresAt is at or before now to expired,
// oldest expiry first. Each gets final time now, a closing attempt row (the next attempt
// ordinal, outcome expired, code "expired", started and finished now) and an audit record
// "message.expired" by "worker". It returns how many it moved.
func (s *Store) ExpireDue(ctx context.Context, now time.Time, limit int) (int, error) {
	if limit <= 0 {
		return 0, nil
	}
	o := &expireOp{now: now, limit: limit}
	if err := s.submit(ctx, o); err != nil {
		return 0, err
	}
	return o.n, nil
}

// expireOp is one ExpireDue on its way through the writer.
type expireOp struct {
	now   time.Time
	limit int
	n     int
}

func (o *expireOp) apply(b *batch) error {
	return b.unit(func() error {
		q := &b.s.q.msg
		now := ms(o.now)
		var ids []string
		if err := b.selectRows(&ids, q.expireSelect, now, o.limit); err != nil {
			return fmt.Errorf("store: expire: select: %w", err)
		}
		if len(ids) == 0 {
			o.n = 0
			return nil
		}
		n, err := b.execIn(q.expireUpdate, now, now, ids)
		if err != nil {
			return fmt.Errorf("store: expire: update: %w", err)
		}
		if _, err := b.execIn(q.expireAttempt, now, now, ids); err != nil {
			return fmt.Errorf("store: expire: attempts: %w", err)
		}
		b.messageChanged(ids...)
		for _, id := range ids {
			if err := b.audit(engine.AuditEntry{Event: "message.expired", Actor: "worker",
				MessageID: id, Outcome: string(engine.DispatchExpired), At: o.now}); err != nil {
				return fmt.Errorf("store: expire %s: %w", id, err)
			}
		}
		o.n = int(n)
		return nil
	})
}
