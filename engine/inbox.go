package engine

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"
)

// Inbox is the peer provider's narrow way into durable state (docs/architecture.md, "The seams": the only place
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

// InboxEntry is one received message: an envelope from a peer, or an inbound message a gateway
// posted (a reply SMS, an inbound chat message).
type InboxEntry struct {
	ID string // inbox id, also the cursor
	// Channel is peer, sms, email or chat; empty means peer.
	Channel Channel
	// Provider is the id of the provider that received it.
	Provider string
	// From is the sender: its peer id, or its address as the gateway gives it.
	From string
	// To is the address it was sent to: this host's peer id, or the gateway's number or address.
	To         string
	Protocol   string // the envelope's protocol; empty for a gateway's entry
	MessageID  string // the envelope's messageId, or the gateway's provider reference
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

// InboundItem is one inbound message a gateway posted (a reply SMS, an inbound chat message), as
// the adapter's callback function returned it.
type InboundItem struct {
	From, To          string // the addresses as the gateway gives them
	Text              string
	ProviderReference string // the gateway's id of the message: stored once per provider
	// ReceivedAt is when the gateway says it received the message; zero when it did not say.
	ReceivedAt time.Time
}

// Limits of an inbound item (docs/adapters.md).
const (
	MaxInboundAddress   = 256
	MaxInboundText      = 64 << 10
	MaxInboundReference = 256
)

// CheckInbound refuses an item the inbox cannot keep, with a reason that holds no value of it.
func CheckInbound(it InboundItem) error {
	switch {
	case it.ProviderReference == "" || len(it.ProviderReference) > MaxInboundReference:
		return fmt.Errorf("providerReference must be 1 to %d bytes", MaxInboundReference)
	case it.From == "" || utf8.RuneCountInString(it.From) > MaxInboundAddress:
		return fmt.Errorf("from must be 1 to %d characters", MaxInboundAddress)
	case utf8.RuneCountInString(it.To) > MaxInboundAddress:
		return fmt.Errorf("to must be at most %d characters", MaxInboundAddress)
	case len(it.Text) > MaxInboundText:
		return fmt.Errorf("text must be at most %d bytes", MaxInboundText)
	case !utf8.ValidString(it.From) || !utf8.ValidString(it.To) || !utf8.ValidString(it.Text) || !utf8.ValidString(it.ProviderReference):
		return fmt.Errorf("from, to, text and providerReference must be UTF-8")
	case !it.ReceivedAt.IsZero() && it.ReceivedAt.Before(time.Unix(0, 0)):
		// tsMs, which keeps it, counts milliseconds since 1970 and is never negative.
		return fmt.Errorf("receivedAt must not be before 1970-01-01T00:00:00Z")
	}
	return nil
}

// GatewayInbox is the inbox's gateway side: the callback route stores inbound items through it.
// A Store implements it.
type GatewayInbox interface {
	// PutInbound stores items received by provider as inbox entries of channel, each once per
	// (provider, ProviderReference), with its idempotency record, audit record and events, all
	// in one transaction. A repeat stores nothing and answers Duplicate with the first entry's
	// id. Results are in the order of items.
	PutInbound(ctx context.Context, provider string, channel Channel, items []InboundItem) ([]InboxResult, error)
}
