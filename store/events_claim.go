package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"time"

	"switchboard/engine"
)

// ClaimEvents leases up to limit due outbox rows of one endpoint, oldest due first, in one
// writer request: select (skipping rows another instance holds, on PostgreSQL), then lease them
// with one token and the expiry now+leaseFor, which is also their next attempt time. A row whose
// lease lapses is due again. A cancelled ctx stops the claim only before it starts.
func (s *Store) ClaimEvents(ctx context.Context, endpoint string, now time.Time, limit int, leaseFor time.Duration) ([]engine.EventClaim, error) {
	if limit <= 0 || leaseFor <= 0 {
		return nil, fmt.Errorf("store: claim events: limit %d and lease %v must be positive", limit, leaseFor)
	}
	o := &eventClaimOp{endpoint: endpoint, now: now, limit: limit,
		lease: engine.EventLease{Token: rand.Text(), ExpiresAt: now.Add(leaseFor)}}
	if err := s.submitAndWait(ctx, o); err != nil {
		return nil, err
	}
	return o.claims, nil
}

// eventClaimOp is one ClaimEvents on its way through the writer.
type eventClaimOp struct {
	endpoint string
	now      time.Time
	limit    int
	lease    engine.EventLease
	claims   []engine.EventClaim
}

// dueEventRow is one row of the due select.
type dueEventRow struct {
	ID        int64  `db:"id"`
	Endpoint  string `db:"endpoint"`
	Type      string `db:"type"`
	Subject   string `db:"subject"`
	Sequence  int64  `db:"sequence"`
	Attempts  int    `db:"attempts"`
	ChangedAt int64  `db:"changed_at"`
	Data      string `db:"data"`
}

func (o *eventClaimOp) apply(b *batch) error {
	return b.step(func() error { return o.claimIn(b) }, neverClean)
}

func (o *eventClaimOp) claimIn(b *batch) error {
	q := &b.s.q.events
	o.claims = nil
	var rows []dueEventRow
	if err := b.selectRows(&rows, q.due, o.endpoint, ms(o.now), o.limit); err != nil {
		return fmt.Errorf("store: claim events: select due: %w", err)
	}
	if len(rows) == 0 {
		return nil
	}
	ids := make([]int64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	n, err := b.execIn(q.lease, o.lease.Token, ms(o.lease.ExpiresAt), ids)
	if err != nil {
		return fmt.Errorf("store: claim events: lease: %w", err)
	}
	if n != int64(len(ids)) {
		return fmt.Errorf("store: claim events: leased %d of %d selected rows", n, len(ids))
	}
	o.claims = make([]engine.EventClaim, len(rows))
	for i, r := range rows {
		lease := o.lease
		lease.ID = r.ID
		o.claims[i] = engine.EventClaim{Endpoint: r.Endpoint, Type: r.Type, Subject: r.Subject,
			Sequence: r.Sequence, Attempts: r.Attempts, ChangedAt: fromMs(r.ChangedAt), Lease: lease}
		if r.Data != "" {
			o.claims[i].Data = []byte(r.Data)
		}
	}
	return nil
}

// RenewEventLeases moves the expiry (and next attempt time) of every lease still held to until.
// Leases that are gone are left alone and make it return an error wrapping engine.ErrLeaseLost.
func (s *Store) RenewEventLeases(ctx context.Context, leases []engine.EventLease, until time.Time) error {
	leases = slices.Clone(leases)
	slices.SortFunc(leases, func(a, b engine.EventLease) int { return cmp.Compare(a.ID, b.ID) })
	held := make([]heldLease, len(leases))
	for i, l := range leases {
		held[i] = heldLease{key: l.ID, token: l.Token}
	}
	return s.renew(ctx, &renewOp{what: "event lease", query: s.q.events.renew, leases: held, until: until})
}

// FinishEvent records one delivery attempt, fenced by its lease: with a stale token it changes
// nothing and returns an error wrapping engine.ErrLeaseLost. A delivered attempt makes the row
// delivered, or, when a newer change arrived meanwhile (its sequence grew past o.Sequence),
// pending and due at once for that change. An undelivered one makes it due at o.NextAttemptAt,
// or failed with o.GiveUp (unless a newer change arrived).
func (s *Store) FinishEvent(ctx context.Context, o engine.EventOutcome) error {
	errs, err := s.FinishEvents(ctx, []engine.EventOutcome{o})
	if err != nil {
		return err
	}
	return errs[0]
}

// FinishEvents records several attempts as FinishEvent does, in one writer request: each
// outcome succeeds or fails on its own (its error in the answer, in the order of outcomes); the
// error is for the request as a whole.
func (s *Store) FinishEvents(ctx context.Context, outcomes []engine.EventOutcome) ([]error, error) {
	op := &eventFinishOp{outcomes: make([]engine.EventOutcome, len(outcomes)), errs: make([]error, len(outcomes))}
	for i, o := range outcomes {
		if o.Lease.ID == 0 || o.Lease.Token == "" {
			return nil, errors.New("store: finish event: lease has no row or token")
		}
		if o.At.IsZero() {
			o.At = s.clock.Now()
		}
		if len(o.Error) > 512 {
			o.Error = o.Error[:512]
		}
		op.outcomes[i] = o
	}
	if len(outcomes) == 0 {
		return nil, nil
	}
	if err := s.submit(ctx, op); err != nil {
		return nil, err
	}
	return op.errs, nil
}

// eventFinishOp is one FinishEvents on its way through the writer.
type eventFinishOp struct {
	outcomes []engine.EventOutcome
	errs     []error
}

func (op *eventFinishOp) apply(b *batch) error {
	for i := range op.outcomes {
		o := &op.outcomes[i]
		op.errs[i] = b.step(func() error { return finishEventIn(b, o) }, func(err error) bool { return errors.Is(err, engine.ErrLeaseLost) })
		if b.poison != nil {
			return b.poison
		}
	}
	return nil
}

// finishEventIn records one outcome: one guarded statement.
func finishEventIn(b *batch, o *engine.EventOutcome) error {
	q := &b.s.q.events
	at, seq := ms(o.At), o.Sequence
	var n int64
	var err error
	if o.Delivered {
		n, err = b.execN(q.delivered, at, o.Status, seq, at, seq, seq, seq, at, at, o.Lease.ID, o.Lease.Token)
	} else {
		give := 0
		if o.GiveUp {
			give = 1
		}
		n, err = b.execN(q.undelivered, at, o.Status, o.Error, give, seq, give, seq, at, ms(o.NextAttemptAt),
			o.Lease.ID, o.Lease.Token)
	}
	if err != nil {
		return fmt.Errorf("store: finish event %d: %w", o.Lease.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("store: finish event %d: %w", o.Lease.ID, engine.ErrLeaseLost)
	}
	return nil
}

var _ engine.EventStore = (*Store)(nil)
