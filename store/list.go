package store

import (
	"context"
	"fmt"
	"strconv"

	"switchboard/engine"
)

// ListMessages returns at most q.Limit (1 to engine.MaxListLimit) messages matching q, from
// metadata only: no payload, no attempts. NewestFirst orders by acceptance time, newest first,
// then id, and has no cursor. ScanOrder follows the row id, the order messages were stored in,
// and Next (the last row id, when the page is full) continues after the page: a message
// changed while a bulk action walks the listing is never met twice.
//
// Only ScanOrder pages are cheap at any depth: a NewestFirst listing sorts the metadata of the
// matching messages (an operator's diagnostic, bounded in what it returns, not in what it reads).
func (s *Store) ListMessages(ctx context.Context, q engine.MessageQuery) (engine.MessagePage, error) {
	if q.Limit < 1 || q.Limit > engine.MaxListLimit {
		return engine.MessagePage{}, fmt.Errorf("store: list: limit %d is not between 1 and %d", q.Limit, engine.MaxListLimit)
	}
	after, err := decodeCursor(q.After)
	if err != nil {
		return engine.MessagePage{}, err
	}
	query, args, err := listStatement(s.d.rebind, q, after, false)
	if err != nil {
		return engine.MessagePage{}, err
	}
	var rows []messageRow
	if err := s.rdb.SelectContext(ctx, &rows, query, args...); err != nil {
		return engine.MessagePage{}, fmt.Errorf("store: list messages: %w", err)
	}
	page := engine.MessagePage{Messages: make([]engine.Message, len(rows))}
	for i := range rows {
		page.Messages[i] = rows[i].message()
	}
	if q.Order == engine.ScanOrder && len(rows) == q.Limit {
		page.Next = strconv.FormatInt(rows[len(rows)-1].Seq, 10)
	}
	return page, nil
}

// CountMessages counts the messages matching q's filters, from metadata only.
func (s *Store) CountMessages(ctx context.Context, q engine.MessageQuery) (int64, error) {
	query, args, err := listStatement(s.d.rebind, q, 0, true)
	if err != nil {
		return 0, err
	}
	var n int64
	if err := s.rdb.GetContext(ctx, &n, query, args...); err != nil {
		return 0, fmt.Errorf("store: count messages: %w", err)
	}
	return n, nil
}

// decodeCursor reads a ScanOrder cursor ("" is the start).
func decodeCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(c, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("store: list: cursor %q is not one this store made", c)
	}
	return n, nil
}
