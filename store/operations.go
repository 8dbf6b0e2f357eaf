package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"switchboard/engine"
)

// Bulk operations (engine.OperationStore) and a message's journal (engine.Journal). Writes go
// through the group-commit writer like every other; reads use the read pool.

// operationRow is one row of operations.
type operationRow struct {
	ID             string         `db:"id"`
	Action         string         `db:"action"`
	Status         string         `db:"status"`
	SenderProfile  string         `db:"sender_profile"`
	AcceptedBefore int64          `db:"accepted_before"`
	Actor          string         `db:"actor"`
	State          string         `db:"state"`
	Total          int64          `db:"total"`
	Done           int64          `db:"done"`
	Failed         int64          `db:"failed"`
	Cursor         string         `db:"cursor"`
	Error          string         `db:"error"`
	CreatedAt      int64          `db:"created_at"`
	UpdatedAt      int64          `db:"updated_at"`
	FinishedAt     sql.NullInt64  `db:"finished_at"`
	LeaseToken     sql.NullString `db:"lease_token"`
	LeaseExpiresAt sql.NullInt64  `db:"lease_expires_at"`
}

func (r *operationRow) operation() *engine.Operation {
	op := &engine.Operation{
		ID: r.ID, Action: engine.Action(r.Action), Actor: r.Actor, State: engine.OperationState(r.State),
		Selection: engine.Selection{Status: r.Status, SenderProfile: r.SenderProfile, Before: fromMs(r.AcceptedBefore)},
		Total:     r.Total, Done: r.Done, Failed: r.Failed, Cursor: r.Cursor, Error: r.Error,
		CreatedAt: fromMs(r.CreatedAt), UpdatedAt: fromMs(r.UpdatedAt), FinishedAt: timePtr(r.FinishedAt),
	}
	if r.LeaseToken.Valid {
		op.Lease = engine.LeaseRef{Token: r.LeaseToken.String, ExpiresAt: fromMs(r.LeaseExpiresAt.Int64)}
	}
	return op
}

// CreateOperation stores a new running operation under op.Lease, with its journal record.
func (s *Store) CreateOperation(ctx context.Context, op engine.Operation, audit engine.AuditEntry) error {
	if op.ID == "" || op.Lease.Token == "" {
		return fmt.Errorf("store: create operation: an id and a lease are required")
	}
	if _, _, _, ok := op.Action.Transition(); !ok {
		return fmt.Errorf("store: create operation: unknown action %q", op.Action)
	}
	if err := s.submit(ctx, &createOperationOp{q: &s.q.operation, op: op, audit: audit}); err != nil {
		return fmt.Errorf("store: create operation %s: %w", op.ID, err)
	}
	return nil
}

type createOperationOp struct {
	q     *operationSQL
	op    engine.Operation
	audit engine.AuditEntry
}

func (o *createOperationOp) apply(b *batch) error {
	return b.unit(func() error {
		op := &o.op
		at := ms(op.CreatedAt)
		if err := b.execCached(o.q.insert, op.ID, string(op.Action), op.Selection.Status,
			op.Selection.SenderProfile, ms(op.Selection.Before), op.Actor, op.Total, at, at,
			op.Lease.Token, ms(op.Lease.ExpiresAt)); err != nil {
			return err
		}
		return b.audit(o.audit)
	})
}

// Operation returns one operation, or engine.ErrOperationNotFound.
func (s *Store) Operation(ctx context.Context, id string) (*engine.Operation, error) {
	var r operationRow
	err := s.rdb.GetContext(ctx, &r, s.q.operation.byID, id)
	if isNoRows(err) {
		return nil, engine.ErrOperationNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: read operation %s: %w", id, err)
	}
	return r.operation(), nil
}

// RecordOperationProgress adds one batch's counts under the operation's lease, or answers
// engine.ErrLeaseLost when the operation is no longer running under p.Token.
func (s *Store) RecordOperationProgress(ctx context.Context, p engine.OperationProgress) error {
	o := &progressOp{q: &s.q.operation, p: p}
	if err := s.submit(ctx, o); err != nil {
		return fmt.Errorf("store: operation %s progress: %w", p.ID, err)
	}
	return nil
}

type progressOp struct {
	q *operationSQL
	p engine.OperationProgress
}

func (o *progressOp) apply(b *batch) error {
	return b.unit(func() error {
		p := &o.p
		at := ms(p.At)
		n, err := b.execN(o.q.progress, p.Done, p.Failed, p.Cursor, string(p.State), p.Error, at,
			ms(p.LeaseUntil), string(p.State), at, string(p.State), p.ID, p.Token)
		if err != nil {
			return err
		}
		if n == 0 {
			return engine.ErrLeaseLost
		}
		return nil
	})
}

// ClaimLapsedOperation takes over the running operation whose lease lapsed first, under a new
// lease; nil when no lease has lapsed.
func (s *Store) ClaimLapsedOperation(ctx context.Context, now time.Time, token string, until time.Time) (*engine.Operation, error) {
	var id string
	err := s.rdb.GetContext(ctx, &id, s.q.operation.lapsed, ms(now))
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: find lapsed operations: %w", err)
	}
	o := &takeOverOp{q: &s.q.operation, id: id, token: token, until: ms(until), now: ms(now)}
	if err := s.submit(ctx, o); err != nil {
		return nil, fmt.Errorf("store: take over operation %s: %w", id, err)
	}
	if !o.taken {
		return nil, nil // another instance took it first
	}
	return s.Operation(ctx, id)
}

type takeOverOp struct {
	q          *operationSQL
	id, token  string
	until, now int64
	taken      bool
}

func (o *takeOverOp) apply(b *batch) error {
	return b.unit(func() error {
		n, err := b.execN(o.q.takeOver, o.token, o.until, o.now, o.id, o.now)
		o.taken = n == 1
		return err
	})
}

// journalRow is one journal record as MessageJournal reads it: a stored record and its chain.
type journalRow struct {
	Writer string `db:"writer"`
	auditRow
}

// MessageJournal returns at most limit records naming message id, oldest first, read from the
// audit_message index.
func (s *Store) MessageJournal(ctx context.Context, id string, limit int) ([]engine.JournalRecord, error) {
	if limit < 1 || limit > engine.MaxJournalRecords {
		return nil, fmt.Errorf("store: journal: limit %d is not between 1 and %d", limit, engine.MaxJournalRecords)
	}
	if id == "" {
		return []engine.JournalRecord{}, nil
	}
	var rows []journalRow
	if err := s.rdb.SelectContext(ctx, &rows, s.q.operation.journal, id, limit); err != nil {
		return nil, fmt.Errorf("store: read the journal of %s: %w", id, err)
	}
	out := make([]engine.JournalRecord, len(rows))
	for i := range rows {
		r := rows[i].record(rows[i].Writer)
		out[i] = engine.JournalRecord{Writer: r.Writer, Seq: r.Seq, At: r.At, Event: r.Event,
			Actor: r.Actor, MessageID: r.MessageID, Outcome: r.Outcome}
	}
	return out, nil
}

var (
	_ engine.OperationStore = (*Store)(nil)
	_ engine.Journal        = (*Store)(nil)
)
