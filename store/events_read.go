package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"time"

	"github.com/jmoiron/sqlx"

	"switchboard/engine"
)

// EventMessages reads the messages with these ids and their attempts, from one snapshot of the
// read pool, in two statements whatever their number: the payloads of a page of events.
func (s *Store) EventMessages(ctx context.Context, ids []string) (map[string]*engine.Message, error) {
	out := make(map[string]*engine.Message, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: read event messages: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var rows []messageRow
	if err := selectIn(ctx, tx, s.d, &rows, s.q.events.messagesByID, ids); err != nil {
		return nil, fmt.Errorf("store: read event messages: %w", err)
	}
	var attempts []struct {
		MessageID string `db:"message_id"`
		attemptRow
	}
	if err := selectIn(ctx, tx, s.d, &attempts, s.q.events.attemptsByID, ids); err != nil {
		return nil, fmt.Errorf("store: read event attempts: %w", err)
	}
	for i := range rows {
		m := rows[i].message()
		m.Attempts = []engine.Attempt{}
		out[m.ID] = &m
	}
	for i := range attempts {
		if m := out[attempts[i].MessageID]; m != nil {
			m.Attempts = append(m.Attempts, attempts[i].attempt())
		}
	}
	for i := range rows {
		if a, ok := rows[i].inProgress(); ok {
			m := out[rows[i].ID]
			m.Attempts = append(m.Attempts, a)
		}
	}
	return out, nil
}

// EventInboxEntries reads the inbox entries with these ids, payloads included.
func (s *Store) EventInboxEntries(ctx context.Context, ids []string) (map[string]*engine.InboxEntry, error) {
	out := make(map[string]*engine.InboxEntry, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var rows []inboxRow
	if err := selectIn(ctx, s.rdb, s.d, &rows, s.q.events.inboxByID, ids); err != nil {
		return nil, fmt.Errorf("store: read event inbox entries: %w", err)
	}
	for i := range rows {
		e := rows[i].entry()
		out[e.ID] = &e
	}
	return out, nil
}

// selectIn runs a statement with an expanded IN (?) list on a read connection. The list is
// padded to a power of two, as the writer's are (padIn): a page of events has any size up to
// its endpoint's cap, and each size would otherwise be a text of its own, parsed again
// whenever it has fallen out of the connection's statement cache.
func selectIn(ctx context.Context, db sqlx.QueryerContext, d *dialect, dest any, query string, args ...any) error {
	q, a, err := sqlx.In(query, padIn(args)...)
	if err != nil {
		return err
	}
	return sqlx.SelectContext(ctx, db, dest, d.rebind(q), a...)
}

// eventRow is one row of webhook_events as selected by eventColumns.
type eventRow struct {
	ID                int64          `db:"id"`
	Endpoint          string         `db:"endpoint"`
	Type              string         `db:"type"`
	Subject           string         `db:"subject"`
	Sequence          int64          `db:"sequence"`
	State             string         `db:"state"`
	ChangedAt         int64          `db:"changed_at"`
	Attempts          int            `db:"attempts"`
	NextAttemptAt     int64          `db:"next_attempt_at"`
	LeaseToken        sql.NullString `db:"lease_token"`
	DeliveredSequence int64          `db:"delivered_sequence"`
	DeliveredAt       sql.NullInt64  `db:"delivered_at"`
	LastAttemptAt     sql.NullInt64  `db:"last_attempt_at"`
	LastStatus        int            `db:"last_status"`
	LastError         string         `db:"last_error"`
}

func (r *eventRow) record() engine.EventRecord {
	return engine.EventRecord{ID: r.ID, Endpoint: r.Endpoint, Type: r.Type, Subject: r.Subject,
		Sequence: r.Sequence, State: engine.EventState(r.State), ChangedAt: fromMs(r.ChangedAt),
		Attempts: r.Attempts, NextAttemptAt: fromMs(r.NextAttemptAt), Leased: r.LeaseToken.Valid,
		DeliveredSequence: r.DeliveredSequence, DeliveredAt: timePtr(r.DeliveredAt),
		LastAttemptAt: timePtr(r.LastAttemptAt), LastStatus: r.LastStatus, LastError: r.LastError}
}

// ListEvents lists up to q.Limit outbox rows, newest change first, metadata only.
func (s *Store) ListEvents(ctx context.Context, q engine.EventQuery) ([]engine.EventRecord, error) {
	if q.Limit < 1 || q.Limit > engine.MaxListLimit {
		return nil, engine.NewProblem(engine.CodeRequestInvalid, "limit must be between 1 and "+strconv.Itoa(engine.MaxListLimit))
	}
	e := &s.q.events
	var rows []eventRow
	var err error
	switch {
	case q.Endpoint != "" && q.State != "":
		err = s.rdb.SelectContext(ctx, &rows, e.listByBoth, q.Endpoint, string(q.State), q.Limit)
	case q.Endpoint != "":
		err = s.rdb.SelectContext(ctx, &rows, e.listByEndpoint, q.Endpoint, q.Limit)
	case q.State != "":
		err = s.rdb.SelectContext(ctx, &rows, e.listByState, string(q.State), q.Limit)
	default:
		err = s.rdb.SelectContext(ctx, &rows, e.list, q.Limit)
	}
	if err != nil {
		return nil, fmt.Errorf("store: list events: %w", err)
	}
	out := make([]engine.EventRecord, len(rows))
	for i := range rows {
		out[i] = rows[i].record()
	}
	return out, nil
}

// EventFigures returns each endpoint's outbox figures, read from metadata.
func (s *Store) EventFigures(ctx context.Context) (map[string]engine.EndpointFigures, error) {
	var rows []struct {
		Endpoint      string        `db:"endpoint"`
		Pending       int64         `db:"pending"`
		Failed        int64         `db:"failed"`
		OldestPending sql.NullInt64 `db:"oldest_pending"`
		LastSuccess   sql.NullInt64 `db:"last_success"`
	}
	if err := s.rdb.SelectContext(ctx, &rows, s.q.events.figures); err != nil {
		return nil, fmt.Errorf("store: event figures: %w", err)
	}
	var failing []struct {
		Endpoint string        `db:"endpoint"`
		Since    int64         `db:"since"`
		Tried    sql.NullInt64 `db:"tried"`
	}
	if err := s.rdb.SelectContext(ctx, &failing, s.q.events.failingSince); err != nil {
		return nil, fmt.Errorf("store: event figures: %w", err)
	}
	out := make(map[string]engine.EndpointFigures, len(rows))
	for _, r := range rows {
		f := engine.EndpointFigures{Pending: r.Pending, Failed: r.Failed}
		if r.OldestPending.Valid {
			f.OldestPending = fromMs(r.OldestPending.Int64)
		}
		if r.LastSuccess.Valid {
			f.LastSuccess = fromMs(r.LastSuccess.Int64)
		}
		out[r.Endpoint] = f
	}
	for _, r := range failing {
		f := out[r.Endpoint]
		// Failing: a failed attempt came after the last success.
		if r.Tried.Valid && fromMs(r.Tried.Int64).After(f.LastSuccess) {
			f.FailingSince = fromMs(r.Since)
			out[r.Endpoint] = f
		}
	}
	return out, nil
}

// PendingEvents counts the pending outbox rows of each endpoint (for the metrics gauge).
func (s *Store) PendingEvents(ctx context.Context) (map[string]int64, error) {
	var rows []struct {
		Endpoint string `db:"endpoint"`
		N        int64  `db:"n"`
	}
	if err := s.rdb.SelectContext(ctx, &rows, s.q.events.pendingByEndpoint); err != nil {
		return nil, fmt.Errorf("store: pending events: %w", err)
	}
	out := make(map[string]int64, len(rows))
	for _, r := range rows {
		out[r.Endpoint] = r.N
	}
	return out, nil
}

// CountRedeliverable counts the delivered and failed rows of endpoint changed at or after since.
func (s *Store) CountRedeliverable(ctx context.Context, endpoint string, since time.Time) (int64, error) {
	var n int64
	if err := s.rdb.GetContext(ctx, &n, s.q.events.redeliverable, endpoint, ms(since)); err != nil {
		return 0, fmt.Errorf("store: count redeliverable events: %w", err)
	}
	return n, nil
}

// Redeliver makes up to limit of endpoint's delivered and failed rows changed at or after since
// pending again, due at now with no attempt, in one writer request with audit (its Outcome is
// filled with the count when empty). It returns how many rows it changed.
func (s *Store) Redeliver(ctx context.Context, endpoint string, since, now time.Time, limit int, audit engine.AuditEntry) (int, error) {
	if limit < 1 || limit > engine.MaxEraseBatch {
		return 0, fmt.Errorf("store: redeliver: limit %d is not between 1 and %d", limit, engine.MaxEraseBatch)
	}
	o := &redeliverOp{endpoint: endpoint, since: ms(since), now: ms(now), limit: limit, audit: audit}
	if err := s.submit(ctx, o); err != nil {
		return 0, fmt.Errorf("store: redeliver: %w", err)
	}
	if o.n > 0 && s.cfg.EventsWritten != nil {
		s.cfg.EventsWritten()
	}
	return o.n, nil
}

// redeliverOp is one batch of Redeliver on its way through the writer.
type redeliverOp struct {
	endpoint   string
	since, now int64
	limit, n   int
	audit      engine.AuditEntry
}

func (o *redeliverOp) apply(b *batch) error {
	return b.unit(func() error {
		o.n = 0
		q := &b.s.q.events
		var ids []int64
		if err := b.selectRows(&ids, q.redeliverSelect, o.endpoint, o.since, o.limit); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		n, err := b.execIn(q.redeliverUpdate, o.now, ids)
		if err != nil {
			return err
		}
		o.n = int(n)
		a := o.audit
		if a.Event == "" {
			a.Event = "webhook.redelivered"
		}
		if a.Outcome == "" {
			a.Outcome = o.endpoint + " " + strconv.Itoa(o.n) + " events"
		}
		if a.At.IsZero() {
			a.At = fromMs(o.now)
		}
		return b.audit(a)
	})
}
