package store

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/jmoiron/sqlx"

	"switchboard/engine"
)

// ListMessages returns at most q.Limit (1 to engine.MaxListLimit) messages matching q, from
// metadata only: no payload, no attempts. Both orders page by keyset, so a page costs the
// same at any depth:
//   - NewestFirst orders by acceptance time, newest first, then id, and walks the
//     messages_accepted index backwards; its cursor holds the last message's acceptance time
//     and id. A filter that matches few messages (a rare sender profile, say) reads the
//     index entries it skips; the held (unknown) messages have an index of their own.
//   - ScanOrder follows the row id, the order messages were stored in, and its cursor is the
//     last row id: a message changed while a bulk action walks the listing is never met twice.
//
// Next is set when the page is full, so the last page may be followed by an empty one.
func (s *Store) ListMessages(ctx context.Context, q engine.MessageQuery) (engine.MessagePage, error) {
	if q.Limit < 1 || q.Limit > engine.MaxListLimit {
		return engine.MessagePage{}, fmt.Errorf("store: list: limit %d is not between 1 and %d", q.Limit, engine.MaxListLimit)
	}
	after, err := decodeCursor(q.Order, q.After)
	if err != nil {
		return engine.MessagePage{}, err
	}
	query, args, err := listStatement(s.d.rebind, q, after, false)
	if err != nil {
		return engine.MessagePage{}, err
	}
	tx, err := s.beginRead(ctx)
	if err != nil {
		return engine.MessagePage{}, fmt.Errorf("store: list messages: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var rows []messageRow
	if err := tx.SelectContext(ctx, &rows, query, args...); err != nil {
		return engine.MessagePage{}, fmt.Errorf("store: list messages: %w", err)
	}
	page := engine.MessagePage{Messages: make([]engine.Message, len(rows))}
	for i := range rows {
		page.Messages[i] = rows[i].message()
	}
	if q.WithAttempts && len(rows) > 0 {
		if err := s.listAttempts(ctx, tx, rows, page.Messages); err != nil {
			return engine.MessagePage{}, err
		}
	}
	if len(rows) == q.Limit {
		last := &rows[len(rows)-1]
		page.Next = encodeCursor(q.Order, listCursor{seq: last.Seq, acceptedAt: last.AcceptedAt, id: last.ID})
	}
	return page, nil
}

// listAttempts fills the attempts of a page's messages with one statement, in the snapshot
// of the listing.
func (s *Store) listAttempts(ctx context.Context, tx *sqlx.Tx, rows []messageRow, msgs []engine.Message) error {
	ids := make([]string, len(rows))
	at := make(map[string]int, len(rows))
	for i := range rows {
		ids[i], at[rows[i].ID] = rows[i].ID, i
		msgs[i].Attempts = []engine.Attempt{}
	}
	query, args, err := sqlx.In(listAttemptsSQL, ids)
	if err != nil {
		return fmt.Errorf("store: list attempts: %w", err)
	}
	var found []listedAttempt
	if err := tx.SelectContext(ctx, &found, s.d.rebind(query), args...); err != nil {
		return fmt.Errorf("store: list attempts: %w", err)
	}
	for i := range found {
		m := &msgs[at[found[i].MessageID]]
		m.Attempts = append(m.Attempts, found[i].attempt())
	}
	for i := range rows {
		if a, ok := rows[i].inProgress(); ok {
			msgs[i].Attempts = append(msgs[i].Attempts, a)
		}
	}
	return nil
}

// CountMessages counts the messages matching q's filters, from metadata only.
func (s *Store) CountMessages(ctx context.Context, q engine.MessageQuery) (int64, error) {
	query, args, err := listStatement(s.d.rebind, q, listCursor{}, true)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.rdb.GetContext(ctx, &n, query, args...); err != nil {
		return 0, fmt.Errorf("store: count messages: %w", err)
	}
	return n, nil
}

// listCursor is where a page ended: the row id (ScanOrder), or the acceptance time and id
// (NewestFirst). The zero value is the start.
type listCursor struct {
	seq        int64
	acceptedAt int64
	id         string
}

func (c listCursor) isStart() bool { return c.seq == 0 && c.id == "" }

// encodeCursor writes a cursor: the decimal row id for ScanOrder, and for NewestFirst the
// base64url text of "n.<acceptedAt>.<id>", so that a cursor of one order is never taken for
// the other's.
func encodeCursor(o engine.MessageOrder, c listCursor) string {
	if o == engine.ScanOrder {
		return strconv.FormatInt(c.seq, 10)
	}
	return base64.RawURLEncoding.EncodeToString([]byte("n." + strconv.FormatInt(c.acceptedAt, 10) + "." + c.id))
}

// decodeCursor reads a cursor of order o ("" is the start).
func decodeCursor(o engine.MessageOrder, text string) (listCursor, error) {
	if text == "" {
		return listCursor{}, nil
	}
	bad := fmt.Errorf("store: list: %w", engine.ErrInvalidCursor)
	if o == engine.ScanOrder {
		n, err := strconv.ParseInt(text, 10, 64)
		if err != nil || n < 0 {
			return listCursor{}, bad
		}
		return listCursor{seq: n}, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return listCursor{}, bad
	}
	rest, ok := strings.CutPrefix(string(raw), "n.")
	if !ok {
		return listCursor{}, bad
	}
	at, id, ok := strings.Cut(rest, ".")
	millis, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" || len(id) > 200 {
		return listCursor{}, bad
	}
	return listCursor{acceptedAt: millis, id: id}, nil
}
