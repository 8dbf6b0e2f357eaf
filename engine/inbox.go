package engine

import (
	"context"
	"time"
)

// Inbox is the peer provider's narrow way into durable state (DESIGN "The flows": the only place
// a provider touches the store). A Store implements it.
type Inbox interface {
	// PutInbox stores one verified inbound envelope and its idempotency record (peer, protocol,
	// messageId, direction in) in one transaction, answering entry.Response. When the record
	// exists already (a duplicate, also one racing this call), nothing is delivered again and the
	// result carries the cached response, or a nil Response when it was too large to keep
	// (the receiver then answers RESPONSE_GONE).
	PutInbox(ctx context.Context, entry InboxEntry) (InboxResult, error)
	// ListInbox returns up to limit entries received after the cursor, oldest first, and the
	// cursor of the last one ("" when there are none).
	ListInbox(ctx context.Context, after string, limit int) ([]InboxEntry, string, error)
}

// InboxEntry is one received peer message.
type InboxEntry struct {
	ID         string // inbox id, also the cursor
	From       string // sender peer id
	Protocol   string
	MessageID  string // the envelope's messageId
	TsMs       uint64
	ReceivedAt time.Time
	Payload    []byte
	// Response is the acknowledgement to send and to cache: {"accepted": true, "inboxId": "…"}.
	Response []byte
	// Respond, with an empty ID, asks the store to assign the inbox id itself, in commit order
	// (so that a reader paging by id never skips an entry committed after a newer one was
	// read), and to build Response from it.
	Respond func(inboxID string) []byte
	// BytesPerDay, above zero, is the sender's daily quota: a new entry whose payload would take
	// the payload bytes stored from From on ReceivedAt's UTC day over it is not stored
	// (InboxResult.OverQuota). The count is kept in the transaction that stores the entry, so
	// it survives a restart and holds across processes sharing the database; a duplicate
	// counts nothing.
	BytesPerDay int64
	// RefuseNew refuses the entry (OverQuota) unless it is a duplicate, which is answered as
	// always: the receiver's per-minute allowance for the sender is spent.
	RefuseNew bool
}

// InboxResult says what PutInbox did.
type InboxResult struct {
	Duplicate bool
	InboxID   string
	Response  []byte // nil for a duplicate whose response was not kept: answer RESPONSE_GONE
	// OverQuota says the entry was new and refused by BytesPerDay or RefuseNew: nothing was
	// stored, not even its idempotency record (a later resend is judged afresh).
	OverQuota bool
}

// PeerDue lets the peer provider make a connected peer's queued messages due at once. A Store
// implements it; peerID is the connected peer's id, matched exactly against the recipient the
// submission gave (the payload's recipient: messages keep no recipient in their metadata).
// It returns how many messages it made due.
type PeerDue interface {
	MakeRecipientDue(ctx context.Context, peerID string, now time.Time) (int, error)
}
