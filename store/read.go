package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"switchboard/engine"
)

// Message returns the metadata of message id with its attempts in order (the in-progress
// attempt of a sending message last), read from one snapshot of the read pool, or
// engine.ErrNotFound. It never loads the payload.
func (s *Store) Message(ctx context.Context, id string) (*engine.Message, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: read message: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	return readMessage(ctx, tx, &s.q.msg, id)
}

// readMessage reads one message and its attempts through db.
func readMessage(ctx context.Context, db sqlx.QueryerContext, q *messageSQL, id string) (*engine.Message, error) {
	var r messageRow
	if err := sqlx.GetContext(ctx, db, &r, q.byID, id); err != nil {
		if isNoRows(err) {
			return nil, engine.ErrNotFound
		}
		return nil, fmt.Errorf("store: read message %s: %w", id, err)
	}
	var rows []attemptRow
	if err := sqlx.SelectContext(ctx, db, &rows, q.attempts, id); err != nil {
		return nil, fmt.Errorf("store: read attempts of %s: %w", id, err)
	}
	m := r.message()
	m.Attempts = make([]engine.Attempt, 0, len(rows)+1)
	for i := range rows {
		m.Attempts = append(m.Attempts, rows[i].attempt())
	}
	if a, ok := r.inProgress(); ok {
		m.Attempts = append(m.Attempts, a)
	}
	return &m, nil
}

// InFlight counts the queued and the sending messages, from the queue's partial indexes: its
// cost grows with the queue, not with the messages kept, so it suits a caller that polls (the
// benchmark waiting for a run to settle), where Stats reads an entry for every message.
func (s *Store) InFlight(ctx context.Context) (queued, sending int64, err error) {
	var n struct {
		Queued  int64 `db:"queued"`
		Sending int64 `db:"sending"`
	}
	if err := s.rdb.GetContext(ctx, &n, s.q.msg.inFlight); err != nil {
		return 0, 0, fmt.Errorf("store: count the messages in flight: %w", err)
	}
	return n.Queued, n.Sending, nil
}

// Stats reads the queue figures for GET /v1/slo from metadata only, counting as oversized the
// due messages larger than Config.MaxPayloadBytes. See StatsFor.
func (s *Store) Stats(ctx context.Context, now time.Time) (engine.Stats, error) {
	return s.StatsFor(ctx, now, s.cfg.MaxPayloadBytes)
}

// dispatchCount is one row of the per-dispatch aggregate.
type dispatchCount struct {
	Dispatch string `db:"dispatch"`
	N        int64  `db:"n"`
	Bytes    int64  `db:"bytes"`
}

// StatsFor reads the queue figures with maxBytes as the page byte budget, from one snapshot:
// queued entries and bytes (due or waiting), claimed (sending) entries and bytes, the age of
// the first due message in claim order (measured from the later of its next attempt time and
// notBefore), the due messages larger than maxBytes, and a count for every dispatch state
// (zero included).
func (s *Store) StatsFor(ctx context.Context, now time.Time, maxBytes int64) (engine.Stats, error) {
	tx, err := s.beginRead(ctx)
	if err != nil {
		return engine.Stats{}, fmt.Errorf("store: stats: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	q := &s.q.msg
	var counts []dispatchCount
	if err := tx.SelectContext(ctx, &counts, q.statsCounts); err != nil {
		return engine.Stats{}, fmt.Errorf("store: stats: counts: %w", err)
	}
	st := engine.Stats{Dispatch: make(map[engine.Dispatch]int64, len(engine.DispatchStates()))}
	for _, d := range engine.DispatchStates() {
		st.Dispatch[d] = 0
	}
	for _, c := range counts {
		d := engine.Dispatch(c.Dispatch)
		st.Dispatch[d] = c.N
		switch d {
		case engine.DispatchQueued:
			st.QueuedEntries, st.QueuedBytes = c.N, c.Bytes
		case engine.DispatchSending:
			st.ClaimedEntries, st.ClaimedBytes = c.N, c.Bytes
		}
	}
	t := ms(now)
	var first struct {
		NextAttemptAt int64         `db:"next_attempt_at"`
		NotBefore     sql.NullInt64 `db:"not_before"`
	}
	switch err := tx.GetContext(ctx, &first, q.statsOldest, t, t, t); {
	case err == nil:
		due := max(first.NextAttemptAt, first.NotBefore.Int64)
		st.OldestDueAge = time.Duration(max(t-due, 0)) * time.Millisecond
	case !isNoRows(err):
		return engine.Stats{}, fmt.Errorf("store: stats: oldest due: %w", err)
	}
	if err := tx.GetContext(ctx, &st.OversizedDueEntries, q.statsOversize, maxBytes, t, t, t); err != nil {
		return engine.Stats{}, fmt.Errorf("store: stats: oversized: %w", err)
	}
	return st, nil
}

// beginRead opens a read transaction that sees one snapshot of the database: SQLite's read
// transactions do by themselves; PostgreSQL's need repeatable read.
func (s *Store) beginRead(ctx context.Context) (*sqlx.Tx, error) {
	if s.d.name != "postgres" {
		return s.rdb.BeginTxx(ctx, nil)
	}
	return s.rdb.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
}
