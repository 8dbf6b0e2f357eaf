package store

import (
	"context"
	"fmt"
	"time"

	"switchboard/engine"
)

// Cancel moves a queued message (waiting for its first attempt or for a retry) to cancelled,
// with final time now and the audit record audit, and returns the message as it now stands.
// It returns an error wrapping engine.ErrDispatchStarted when the message is sending or
// unknown, engine.ErrTerminal when it is final, and engine.ErrNotFound when there is none.
func (s *Store) Cancel(ctx context.Context, id string, audit engine.AuditEntry, now time.Time) (*engine.Message, error) {
	if audit.Event == "" {
		audit.Event = "message.cancelled"
	}
	if audit.MessageID == "" {
		audit.MessageID = id
	}
	if audit.At.IsZero() {
		audit.At = now
	}
	if audit.Outcome == "" {
		audit.Outcome = string(engine.DispatchCancelled)
	}
	o := &cancelOp{id: id, audit: audit, now: now}
	if err := s.submit(ctx, o); err != nil {
		return nil, err
	}
	return o.msg, nil
}

// cancelOp is one Cancel on its way through the writer.
type cancelOp struct {
	id    string
	audit engine.AuditEntry
	now   time.Time
	msg   *engine.Message
}

func (o *cancelOp) apply(b *batch) error {
	return b.unit(func() error {
		n, err := b.execN(b.s.q.msg.cancel, ms(o.now), ms(o.now), o.id)
		if err != nil {
			return fmt.Errorf("store: cancel %s: %w", o.id, err)
		}
		if n == 0 {
			return b.whyNotQueued(o.id)
		}
		if err := b.audit(o.audit); err != nil {
			return fmt.Errorf("store: cancel %s: %w", o.id, err)
		}
		b.messageChanged(o.id)
		o.msg, err = readMessage(b.ctx, b.w.conn, &b.s.q.msg, o.id)
		return err
	})
}

// whyNotQueued returns the error for an action that needs a queued message and found none.
func (b *batch) whyNotQueued(id string) error {
	var d string
	if err := b.get(&d, b.s.q.msg.dispatchOf, id); err != nil {
		if isNoRows(err) {
			return engine.ErrNotFound
		}
		return fmt.Errorf("store: read dispatch of %s: %w", id, err)
	}
	switch dispatch := engine.Dispatch(d); {
	case dispatch.Final():
		return engine.ErrTerminal
	case dispatch == engine.DispatchSending || dispatch == engine.DispatchUnknown:
		return engine.ErrDispatchStarted
	default:
		return fmt.Errorf("store: message %s is %s: %w", id, d, engine.ErrNotEligible)
	}
}

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
