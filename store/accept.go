package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"switchboard/engine"
)

// Accept makes a batch of submissions durable through the group-commit writer. Each acceptance
// succeeds or fails on its own, inside one savepoint of the shared transaction: it writes the
// message row, its payload, its idempotency record, its audit record, and counts it in its
// access profile's daily counter. Results are in the order of batch.
//
// Idempotency resolves inside the writer, so concurrent acceptances with one key see each
// other: the first wins, a later one with the same request hash gets the first's stored
// response with Replayed, one with another hash ErrIdempotencyKeyReused, and any acceptance at
// or after the record's ExpiresAt (or after the stored response was erased)
// ErrIdempotencyExpired. An acceptance with an empty Idempotency.Key keeps no record.
//
// The stored payload is the JSON encoding of Payload (without HTML escaping). Message.PayloadBytes
// is the size the page byte budget counts: the engine's measure of the rendered payload when
// it sets one, else the length of the stored encoding. Unset times default: AcceptedAt to the
// clock, UpdatedAt to AcceptedAt, NextAttemptAt to the later of AcceptedAt and NotBefore.
func (s *Store) Accept(ctx context.Context, batch []engine.Acceptance) []engine.AcceptResult {
	if len(batch) == 0 {
		return nil
	}
	o := &acceptOp{items: make([]acceptItem, len(batch)), results: make([]engine.AcceptResult, len(batch))}
	now := s.clock.Now()
	for i := range batch {
		o.items[i] = prepareAcceptance(&batch[i], now)
	}
	if err := s.submit(ctx, o); err != nil {
		// o.results may still be written by the writer when ctx ended: answer from a new slice.
		failed := make([]engine.AcceptResult, len(batch))
		for i := range failed {
			failed[i].Err = err
		}
		return failed
	}
	return o.results
}

// acceptOp is one Accept call on its way through the writer.
type acceptOp struct {
	items   []acceptItem
	results []engine.AcceptResult
}

// acceptItem is one acceptance, encoded by the caller's goroutine so that the writer only writes.
type acceptItem struct {
	err        error // set when the acceptance is invalid: the writer skips it
	id         string
	acceptedAt time.Time
	idem       engine.IdempotencyRecord
	message    []any
	payload    []byte
	daily      dailyKey
	limit      int
	audit      engine.AuditEntry
}

// prepareAcceptance validates a, fills defaults and encodes what the writer will store.
func prepareAcceptance(a *engine.Acceptance, now time.Time) acceptItem {
	m := a.Message
	if m.ID == "" {
		return acceptItem{err: errors.New("store: accept: message id is empty")}
	}
	if m.AcceptedAt.IsZero() {
		m.AcceptedAt = now
	}
	if m.Dispatch == "" {
		m.Dispatch = engine.DispatchQueued
	}
	if m.Dispatch != engine.DispatchQueued {
		return acceptItem{err: fmt.Errorf("store: accept %s: dispatch is %q, not queued", m.ID, m.Dispatch)}
	}
	if m.Report == "" {
		m.Report = engine.ReportNone
	}
	if m.Generation == 0 {
		m.Generation = 1
	}
	if m.UpdatedAt.IsZero() {
		m.UpdatedAt = m.AcceptedAt
	}
	if m.NextAttemptAt.IsZero() {
		m.NextAttemptAt = m.AcceptedAt
		if m.NotBefore != nil && m.NotBefore.After(m.NextAttemptAt) {
			m.NextAttemptAt = *m.NotBefore
		}
	}
	if m.ExpiresAt.IsZero() {
		return acceptItem{err: fmt.Errorf("store: accept %s: expiresAt is not set", m.ID)}
	}
	payload, err := encodePayload(&a.Payload)
	if err != nil {
		return acceptItem{err: fmt.Errorf("store: accept %s: encode payload: %w", m.ID, err)}
	}
	size := m.PayloadBytes
	if size <= 0 {
		size = int64(len(payload))
	}
	audit := a.Audit
	if audit.Event == "" {
		audit.Event = "message.accepted"
	}
	if audit.MessageID == "" {
		audit.MessageID = m.ID
	}
	if audit.At.IsZero() {
		audit.At = m.AcceptedAt
	}
	if audit.Outcome == "" {
		audit.Outcome = string(engine.DispatchQueued)
	}
	idem := a.Idempotency
	if idem.Response == nil {
		idem.Response = []byte{} // NULL means erased
	}
	if idem.RequestHash == nil {
		idem.RequestHash = []byte{}
	}
	return acceptItem{
		id:         m.ID,
		acceptedAt: m.AcceptedAt,
		idem:       idem,
		message:    messageInsertArgs(&m, size),
		payload:    payload,
		daily:      dailyKey{profile: m.AccessProfile, day: utcDay(m.AcceptedAt)},
		limit:      a.DailyLimit,
		audit:      audit,
	}
}

// encodePayload is the stored form of a payload: JSON, with <, > and & kept as they are so
// that HTML parts do not grow.
func encodePayload(p *engine.Payload) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// apply runs each acceptance in its own unit of the batch. On the batch's fast path an
// acceptance runs without a savepoint: its refusals either wrote nothing (a spent key) or undo
// their one write (the daily limit), and any other failure poisons the batch, which the writer
// then rolls back and runs again with a savepoint per acceptance (see batch.fast).
func (o *acceptOp) apply(b *batch) error {
	if b.fast {
		// Gathered; batch.flushAccepts writes them with multi-row statements.
		for i := range o.items {
			if o.items[i].err != nil {
				o.results[i] = engine.AcceptResult{Err: o.items[i].err}
				continue
			}
			b.pending = append(b.pending, pendingAccept{it: &o.items[i], res: &o.results[i]})
		}
		return nil
	}
	for i := range o.items {
		it := &o.items[i]
		if it.err != nil {
			o.results[i] = engine.AcceptResult{Err: it.err}
			continue
		}
		var res engine.AcceptResult
		run := func() error {
			var err error
			res, err = b.acceptOne(it)
			return err
		}
		if err := b.unit(run); err != nil { // the slow path: the fast one gathered above
			res = engine.AcceptResult{Err: err}
		}
		o.results[i] = res
	}
	return nil
}

// cleanAcceptRefusal reports whether acceptOne failed without leaving a write behind.
func cleanAcceptRefusal(err error) bool {
	return errors.Is(err, engine.ErrIdempotencyKeyReused) || errors.Is(err, engine.ErrIdempotencyExpired) ||
		errors.Is(err, engine.ErrQuotaExceeded)
}

// acceptOne writes one acceptance, or resolves it against the record already holding its key.
func (b *batch) acceptOne(it *acceptItem) (engine.AcceptResult, error) {
	q := &b.s.q.accept
	if it.idem.Key != "" {
		n, err := b.execN(q.idemInsert, it.idem.Issuer, it.idem.Subject, it.idem.Key, it.idem.RequestHash,
			it.idem.Response, it.id, ms(it.acceptedAt), ms(it.idem.ExpiresAt))
		if err != nil {
			return engine.AcceptResult{}, fmt.Errorf("store: accept %s: idempotency record: %w", it.id, err)
		}
		if n == 0 {
			return b.resolveKey(it)
		}
	}
	count, err := b.dailyCount(it.daily, it.limit)
	if err != nil {
		return engine.AcceptResult{}, err
	}
	if it.limit > 0 && count >= int64(it.limit) {
		if it.idem.Key != "" {
			if err := b.execCached(q.idemDelete, it.idem.Issuer, it.idem.Subject, it.idem.Key); err != nil {
				return engine.AcceptResult{}, fmt.Errorf("store: accept %s: undo idempotency record: %w", it.id, err)
			}
		}
		return engine.AcceptResult{}, engine.ErrQuotaExceeded
	}
	seq, err := b.insert(b.s.q.msg.insert, it.message...)
	if err != nil {
		return engine.AcceptResult{}, fmt.Errorf("store: accept %s: message: %w", it.id, err)
	}
	if err := b.execCached(b.s.q.msg.insertPayload, seq, it.payload); err != nil {
		return engine.AcceptResult{}, fmt.Errorf("store: accept %s: payload: %w", it.id, err)
	}
	if err := b.audit(it.audit); err != nil {
		return engine.AcceptResult{}, fmt.Errorf("store: accept %s: %w", it.id, err)
	}
	b.messageChanged(it.id)
	b.countDaily(it.daily) // last: nothing after this can fail the unit
	return engine.AcceptResult{Response: it.idem.Response, MessageID: it.id}, nil
}

// idempotencyRow is a stored idempotency record.
type idempotencyRow struct {
	RequestHash []byte `db:"request_hash"`
	Response    []byte `db:"response"`
	MessageID   string `db:"message_id"`
	ExpiresAt   int64  `db:"expires_at"`
}

// resolveKey answers an acceptance whose key is already spent.
func (b *batch) resolveKey(it *acceptItem) (engine.AcceptResult, error) {
	var rec idempotencyRow
	if err := b.get(&rec, b.s.q.accept.idemSelect, it.idem.Issuer, it.idem.Subject, it.idem.Key); err != nil {
		return engine.AcceptResult{}, fmt.Errorf("store: accept %s: read idempotency record: %w", it.id, err)
	}
	if !it.acceptedAt.Before(fromMs(rec.ExpiresAt)) || rec.Response == nil {
		return engine.AcceptResult{}, engine.ErrIdempotencyExpired
	}
	if !bytes.Equal(rec.RequestHash, it.idem.RequestHash) {
		return engine.AcceptResult{}, engine.ErrIdempotencyKeyReused
	}
	return engine.AcceptResult{Response: rec.Response, MessageID: rec.MessageID, Replayed: true}, nil
}
