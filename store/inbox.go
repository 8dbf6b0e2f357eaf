package store

import (
	"github.com/google/uuid"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"switchboard/engine"
)

// The peer inbox (docs/operations.md, "The peer channel"): engine.Inbox for the peer provider's inbound side and the
// inbox readers, and engine.PeerDue for its connection events.

const (
	// MaxCachedResponse is the largest acknowledgement kept for duplicates (256 KiB,
	// docs/operations.md, "The peer channel"); a duplicate of an envelope whose answer was larger gets RESPONSE_GONE.
	MaxCachedResponse = 256 << 10
	// InboxPageBytes bounds the payload bytes of one ListInbox page, so that a page of large
	// envelopes (up to 10 MiB each) never holds more than this in memory. A page always holds
	// at least one entry, however large.
	InboxPageBytes = 16 << 20
	// makeDueChunk bounds the messages one writer request of MakeRecipientDue changes, so that
	// a peer with a long queue never holds the writer for long.
	makeDueChunk = 500
)

// PutInbox stores one verified inbound envelope with its idempotency record (entry.From,
// entry.Protocol, entry.MessageID, direction in) in one transaction, through the group-commit
// writer. The first envelope of a key wins, also against one racing it in the same batch: it
// is stored under entry.ID and answered with entry.Response. Every later one stores nothing
// and is answered Duplicate with the first one's inbox id and its cached response, which is
// nil when the first response was over MaxCachedResponse (the receiver answers RESPONSE_GONE).
//
// A new entry over its sender's quota (entry.BytesPerDay, entry.RefuseNew) stores nothing and
// is answered OverQuota; a duplicate is answered as above and counts nothing.
//
// entry.ID must be a UUIDv7 in canonical text form (ListInbox pages by it); From, Protocol and
// MessageID must not be empty. TsMs is kept bit for bit (any uint64). An unset ReceivedAt is
// the store's clock. The store may still read entry's byte slices after ctx ended, until the
// writer is done with them: the caller must not change them.
func (s *Store) PutInbox(ctx context.Context, entry engine.InboxEntry) (engine.InboxResult, error) {
	if err := checkInboxEntry(&entry); err != nil {
		return engine.InboxResult{}, err
	}
	if entry.ReceivedAt.IsZero() {
		entry.ReceivedAt = s.clock.Now()
	}
	if entry.Payload == nil {
		entry.Payload = []byte{} // NULL means erased
	}
	if entry.Channel == "" {
		entry.Channel = engine.ChannelPeer
	}
	o := &inboxOp{q: &s.q.inbox, entry: entry}
	if len(entry.Response) <= MaxCachedResponse {
		o.cached = entry.Response
	}
	if err := s.submit(ctx, o); err != nil {
		return engine.InboxResult{}, fmt.Errorf("store: put inbox entry %s: %w", entry.ID, err)
	}
	return o.result, nil
}

// checkInboxEntry refuses an entry the inbox cannot keep or page.
func checkInboxEntry(e *engine.InboxEntry) error {
	switch {
	case e.ID == "" && e.Respond == nil:
		return errors.New("store: put inbox entry: no id and no way to build the acknowledgement")
	case e.ID != "" && !isInboxID(e.ID):
		return fmt.Errorf("store: put inbox entry: id %q is not a canonical UUIDv7", e.ID)
	case e.From == "":
		return errors.New("store: put inbox entry: the sender peer id is empty")
	case e.Protocol == "":
		return errors.New("store: put inbox entry: the protocol is empty")
	case e.MessageID == "":
		return errors.New("store: put inbox entry: the envelope's messageId is empty")
	}
	return nil
}

// inboxOp is one PutInbox on its way through the writer.
type inboxOp struct {
	q      *inboxSQL
	entry  engine.InboxEntry
	cached []byte // the response to keep: entry.Response, or nil when it is too large
	result engine.InboxResult
}

// apply stores the entry in its own unit of the batch, so that a failure of the entry undoes
// its idempotency record too. It sets result afresh, since the writer may run a batch twice.
func (o *inboxOp) apply(b *batch) error {
	o.result = engine.InboxResult{}
	err := b.unit(func() error {
		res, err := o.put(b)
		if err == nil {
			o.result = res
		}
		return err
	})
	if errors.Is(err, errOverQuota) { // the unit undid the idempotency record
		o.result = engine.InboxResult{OverQuota: true}
		return nil
	}
	return err
}

// errOverQuota ends the unit of an entry its sender's quota refuses, so that its idempotency
// record is undone.
var errOverQuota = errors.New("store: put inbox entry: over the sender's quota")

// count refuses a new entry the quota does not allow, and otherwise adds its payload to its
// sender's bytes of the day. The first entry of a day also deletes the counts of earlier days.
func (o *inboxOp) count(b *batch) error {
	e := &o.entry
	if e.RefuseNew {
		return errOverQuota
	}
	if e.BytesPerDay <= 0 {
		return nil
	}
	add := int64(len(e.Payload))
	if add > e.BytesPerDay {
		return errOverQuota
	}
	day := utcDay(e.ReceivedAt)
	var total int64
	switch err := b.get(&total, o.q.dailyAdd, day, e.From, add, e.BytesPerDay); {
	case errors.Is(err, sql.ErrNoRows):
		return errOverQuota
	case err != nil:
		return fmt.Errorf("store: put inbox entry: count the sender's bytes: %w", err)
	}
	if total == add && add > 0 { // a new row: the day changed for this sender
		if _, err := b.execN(o.q.dailyPrune, day); err != nil {
			return fmt.Errorf("store: put inbox entry: prune earlier days' counts: %w", err)
		}
	}
	return nil
}

// put writes the idempotency record and the entry, or resolves a duplicate.
func (o *inboxOp) put(b *batch) (engine.InboxResult, error) {
	e := &o.entry
	if e.ID == "" {
		id, err := newInboxID(b)
		if err != nil {
			return engine.InboxResult{}, fmt.Errorf("store: put inbox entry: new id: %w", err)
		}
		e.ID = id
		e.Response = e.Respond(e.ID)
		o.cached = nil
		if len(e.Response) <= MaxCachedResponse {
			o.cached = e.Response
		}
	}
	n, err := b.execN(o.q.idemInsert, e.From, e.Protocol, e.MessageID, o.cached, e.ID, ms(e.ReceivedAt))
	if err != nil {
		return engine.InboxResult{}, fmt.Errorf("store: put inbox entry %s: idempotency record: %w", e.ID, err)
	}
	if n == 0 {
		var rec struct {
			Response []byte         `db:"response"`
			InboxID  sql.NullString `db:"inbox_id"`
		}
		if err := b.get(&rec, o.q.idemSelect, e.From, e.Protocol, e.MessageID); err != nil {
			return engine.InboxResult{}, fmt.Errorf("store: put inbox entry %s: read idempotency record: %w", e.ID, err)
		}
		return engine.InboxResult{Duplicate: true, InboxID: rec.InboxID.String, Response: rec.Response}, nil
	}
	if err := o.count(b); err != nil {
		return engine.InboxResult{}, err
	}
	// ts_ms is a signed 64-bit column: the envelope's uint64 is stored as its bit pattern.
	if err := b.execCached(o.q.entry, e.ID, e.From, e.Protocol, e.MessageID, int64(e.TsMs),
		ms(e.ReceivedAt), len(e.Payload), e.Payload, string(e.Channel), e.Provider, e.To); err != nil {
		return engine.InboxResult{}, fmt.Errorf("store: put inbox entry %s: %w", e.ID, err)
	}
	if err := b.audit(inboxAudit(e)); err != nil {
		return engine.InboxResult{}, fmt.Errorf("store: put inbox entry %s: %w", e.ID, err)
	}
	b.inboxStored(e.ID, e.Provider)
	return engine.InboxResult{InboxID: e.ID, Response: e.Response}, nil
}

// inboxAudit is the journal record of a stored envelope: event "inbox.received", actor "peer"
// (the sender's peer id stays in the inbox entry, which retention erases), the inbox entry's id
// as the message id, and the protocol as the outcome. A duplicate changes nothing and writes no
// record.
func inboxAudit(e *engine.InboxEntry) engine.AuditEntry {
	return engine.AuditEntry{Event: "inbox.received", Actor: "peer", MessageID: e.ID, Outcome: e.Protocol, At: e.ReceivedAt}
}

// newInboxID draws the id of a new inbox entry so that ids sort as the entries commit. The writer
// applies operations in commit order, and UUIDv7s drawn in one process increase. On PostgreSQL,
// where other instances write too, the entry first takes the inbox lock (held until its batch
// commits) and its id is made greater than every id already stored, whatever the other
// instances' clocks say.
func newInboxID(b *batch) (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	d := b.s.d
	if d.serializeInbox == "" {
		return u.String(), nil
	}
	if err := b.execCached(d.serializeInbox); err != nil {
		return "", fmt.Errorf("take the inbox lock: %w", err)
	}
	var last string
	if err := b.get(&last, d.inboxLastID); err != nil {
		return "", fmt.Errorf("read the last inbox id: %w", err)
	}
	return idAfter(u, last), nil
}

// idAfter returns u as a string when it sorts after last, else the UUID just after last: last
// plus one in its low 62 bits (its random part), keeping last's version and variant. Ids are
// compared as lowercase hyphenated strings, whose order is their numeric order.
func idAfter(u uuid.UUID, last string) string {
	if s := u.String(); s > last {
		return s
	}
	prev, err := uuid.Parse(last)
	if err != nil {
		return u.String() // not a UUID: cannot happen for ids this store drew
	}
	next := prev
	for i := 15; i >= 8; i-- {
		next[i]++
		if next[i] != 0 {
			break
		}
	}
	next[8] = next[8]&0x3f | 0x80 // the variant bits stay RFC 4122's
	return next.String()
}

// ListInbox returns up to limit (1 to engine.MaxListLimit) entries whose id sorts after the
// cursor after ("" is the start), oldest first, read from one snapshot, and the id of the last
// one as the next cursor ("" when there are none). A page holds fewer than limit entries when
// the next entry's payload would take the page over InboxPageBytes (never fewer than one).
// Response is not read. Payload is nil for an entry whose payload retention erased, and
// non-nil (possibly empty) otherwise.
//
// A limit out of range or an after that is not a canonical UUID is refused with an
// engine.Problem of code request.invalid.
func (s *Store) ListInbox(ctx context.Context, after string, limit int) ([]engine.InboxEntry, string, error) {
	return s.ListInboxOf(ctx, after, limit, nil)
}

// ListInboxOf is ListInbox restricted to the entries received by providers (nil: every entry, an
// empty list: none), for receivers whose access profile lists inboxProviders.
func (s *Store) ListInboxOf(ctx context.Context, after string, limit int, providers []string) ([]engine.InboxEntry, string, error) {
	if providers != nil && len(providers) == 0 {
		return nil, "", nil
	}
	if limit < 1 || limit > engine.MaxListLimit {
		return nil, "", engine.NewProblem(engine.CodeRequestInvalid,
			"limit must be between 1 and "+strconv.Itoa(engine.MaxListLimit))
	}
	if after != "" && !isUUID(after) {
		return nil, "", engine.NewProblem(engine.CodeRequestInvalid, "after must be a cursor the inbox gave out")
	}
	q := &s.q.inbox
	tx, err := s.beginRead(ctx)
	if err != nil {
		return nil, "", fmt.Errorf("store: list inbox: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var sizes []inboxSize
	sizesQuery, sizesArgs := q.pageSizes, []any{after, limit}
	rowsQuery := q.pageRows
	if providers != nil {
		sizesQuery, sizesArgs, rowsQuery = q.pageSizesOf, []any{after, providers, limit}, q.pageRowsOf
	}
	if err := selectIn(ctx, tx, s.d, &sizes, sizesQuery, sizesArgs...); err != nil {
		return nil, "", fmt.Errorf("store: list inbox: sizes: %w", err)
	}
	if len(sizes) == 0 {
		return nil, "", nil
	}
	last := sizes[admitInbox(sizes, InboxPageBytes)].ID
	var rows []inboxRow
	rowsArgs := []any{after, last}
	if providers != nil {
		rowsArgs = append(rowsArgs, providers)
	}
	if err := selectIn(ctx, tx, s.d, &rows, rowsQuery, rowsArgs...); err != nil {
		return nil, "", fmt.Errorf("store: list inbox: %w", err)
	}
	entries := make([]engine.InboxEntry, len(rows))
	for i := range rows {
		entries[i] = rows[i].entry()
	}
	if len(entries) == 0 {
		return nil, "", nil
	}
	return entries, entries[len(entries)-1].ID, nil
}

// inboxSize is one row of a page's first statement.
type inboxSize struct {
	ID    string `db:"id"`
	Bytes int64  `db:"bytes"`
}

// admitInbox returns the index of the last entry of sizes that fits budget, counting from the
// first; the first entry is always admitted.
func admitInbox(sizes []inboxSize, budget int64) int {
	var total int64
	for i, sz := range sizes {
		total += sz.Bytes
		if total > budget && i > 0 {
			return i - 1
		}
	}
	return len(sizes) - 1
}

// inboxRow is one row of peer_inbox as selected by inboxColumns.
type inboxRow struct {
	ID              string        `db:"id"`
	From            string        `db:"from_peer"`
	Protocol        string        `db:"protocol"`
	MessageID       string        `db:"message_id"`
	TsMs            int64         `db:"ts_ms"`
	ReceivedAt      int64         `db:"received_at"`
	Payload         []byte        `db:"payload"`
	PayloadErasedAt sql.NullInt64 `db:"payload_erased_at"`
	Channel         string        `db:"channel"`
	Provider        string        `db:"provider"`
	To              string        `db:"to_address"`
}

// entry converts the row to the engine's inbox entry.
func (r *inboxRow) entry() engine.InboxEntry {
	e := engine.InboxEntry{
		ID: r.ID, Channel: engine.Channel(r.Channel), Provider: r.Provider, From: r.From, To: r.To,
		Protocol: r.Protocol, MessageID: r.MessageID,
		TsMs: uint64(r.TsMs), ReceivedAt: fromMs(r.ReceivedAt), Payload: r.Payload,
	}
	if r.Provider != "" && r.TsMs < 0 {
		// A gateway's time is a signed count: one before 1970 (stored before PutInbound
		// refused such times) has no unsigned tsMs and reads as none given, never wrapped
		// into a count 584 million years away. A peer's tsMs is its envelope's uint64.
		e.TsMs = 0
	}
	switch {
	case r.PayloadErasedAt.Valid:
		e.Payload = nil
	case e.Payload == nil:
		e.Payload = []byte{}
	}
	return e
}

// MakeRecipientDue makes the queued peer messages to peerID that wait for a later attempt due
// at now, and returns how many it changed. peerID is matched exactly against the recipient of
// each message's payload (the peer id as the submission gave it). Messages already due, held
// by notBefore, claimed, final, or of another channel are left alone. It works in writer
// requests of a bounded size until none is left, so a long queue never holds the writer.
func (s *Store) MakeRecipientDue(ctx context.Context, peerID string, now time.Time) (int, error) {
	if peerID == "" {
		return 0, errors.New("store: make recipient due: the peer id is empty")
	}
	q := &s.q.inbox
	total := 0
	for {
		o := &makeDueOp{query: q.makeDue, peerID: peerID, now: ms(now), limit: makeDueChunk}
		if err := s.submit(ctx, o); err != nil {
			return total, fmt.Errorf("store: make recipient due: %w", err)
		}
		total += o.changed
		if o.changed < makeDueChunk {
			return total, nil
		}
	}
}

// makeDueOp is one chunk of MakeRecipientDue on its way through the writer.
type makeDueOp struct {
	query   string
	peerID  string
	now     int64
	limit   int
	changed int
}

func (o *makeDueOp) apply(b *batch) error {
	o.changed = 0
	return b.unit(func() error {
		n, err := b.execN(o.query, o.now, o.now, o.now, o.peerID, o.limit)
		if err != nil {
			return err
		}
		o.changed = int(n)
		return nil
	})
}

// isUUID reports whether s is a UUID in canonical text form (lowercase, with hyphens): the
// form whose byte order is the UUIDs' order.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// isInboxID reports whether s is a canonical UUIDv7 (RFC 9562): version 7, variant 10.
func isInboxID(s string) bool {
	return isUUID(s) && s[14] == '7' && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b')
}

// Interface guards.
var (
	_ engine.Inbox   = (*Store)(nil)
	_ engine.PeerDue = (*Store)(nil)
)
