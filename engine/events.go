package engine

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Events to applications (docs/webhooks.md): the store writes one outbox row per endpoint and
// subject in the transaction of every change it reports, and the delivery worker
// (engine/webhooks) sends them.

// The event types.
const (
	// EventMessageStatus reports a change of a message's status, dispatch or report, acceptance
	// included. Its data is the message view with the message's sequence.
	EventMessageStatus = "message.status"
	// EventInboxReceived reports a stored inbox entry, from a peer or from a gateway.
	EventInboxReceived = "inbox.received"
	// EventDeviceUnregistered reports a send that failed for good because the gateway said the
	// recipient's device token is no longer valid. Its data is a DeviceUnregistered.
	EventDeviceUnregistered = "device.unregistered"
)

// EventTypes lists every event type.
func EventTypes() []string {
	return []string{EventMessageStatus, EventInboxReceived, EventDeviceUnregistered}
}

// DeviceUnregistered is the data of a device.unregistered event, written with the outcome that
// reports it: the message, the provider whose gateway refused the token, and when. Token is the
// device token itself, set only for the messages of an access profile that opts in
// (deviceTokenInEvents, docs/webhooks.md).
type DeviceUnregistered struct {
	MessageID string    `json:"messageId"`
	Provider  string    `json:"provider"`
	At        time.Time `json:"at"`
	Token     string    `json:"token,omitempty"`
}

// EventState is where an outbox row stands.
type EventState string

const (
	// EventPending: not delivered yet; due at its next attempt time (a claimed row is pending
	// under a lease until its outcome is recorded).
	EventPending EventState = "pending"
	// EventDelivered: the endpoint answered 2xx for the row's latest sequence.
	EventDelivered EventState = "delivered"
	// EventFailed: every attempt of the retry schedule failed. A newer change of its subject, or
	// an operator's redeliver, makes it pending again.
	EventFailed EventState = "failed"
)

// EventStates lists every event state.
func EventStates() []EventState { return []EventState{EventPending, EventDelivered, EventFailed} }

// Subscription is what the store writes outbox rows for, for one endpoint.
type Subscription struct {
	Endpoint string
	// MessageProfiles are the access profiles whose messages' changes the endpoint gets as
	// message.status events; empty for none.
	MessageProfiles []string
	// Inbox is set when the endpoint gets inbox.received events: of every inbox entry when
	// InboxProviders is nil, else of the entries received by those providers.
	Inbox          bool
	InboxProviders []string
	// DeviceProfiles are the access profiles whose messages' device.unregistered events the
	// endpoint gets; empty for none.
	DeviceProfiles []string
}

// Reads reports whether the subscription takes the inbox entries received by provider.
func (s Subscription) Reads(provider string) bool {
	if !s.Inbox {
		return false
	}
	if s.InboxProviders == nil {
		return true
	}
	for _, p := range s.InboxProviders {
		if p == provider {
			return true
		}
	}
	return false
}

// EventLease fences every write of a claimed outbox row.
type EventLease struct {
	ID        int64 // the outbox row
	Token     string
	ExpiresAt time.Time
}

// EventClaim is one claimed outbox row.
type EventClaim struct {
	Endpoint string
	Type     string
	Subject  string // message id or inbox entry id
	Sequence int64  // the latest change written for the subject
	Attempts int    // attempts made so far
	// ChangedAt is when the latest change was written.
	ChangedAt time.Time
	// Data is the event's data as it was written with the change, for the types whose data is
	// not read from their subject when they are sent (device.unregistered); else empty.
	Data  []byte
	Lease EventLease
}

// EventOutcome is what one delivery attempt did.
type EventOutcome struct {
	Lease EventLease
	// Sequence is the sequence the attempt sent. A row whose sequence grew in the meantime stays
	// pending for the newer one, whatever the attempt did.
	Sequence  int64
	Delivered bool
	// GiveUp makes an undelivered row failed (the schedule is spent); else it is due again at
	// NextAttemptAt.
	GiveUp        bool
	NextAttemptAt time.Time
	Status        int    // the HTTP status answered, 0 when none
	Error         string // what went wrong, for operators (never a payload)
	At            time.Time
}

// EventRecord is one outbox row as the webhooks commands list it.
type EventRecord struct {
	ID                int64
	Endpoint          string
	Type              string
	Subject           string
	Sequence          int64
	State             EventState
	ChangedAt         time.Time
	Attempts          int
	NextAttemptAt     time.Time
	Leased            bool
	DeliveredSequence int64
	DeliveredAt       *time.Time
	LastAttemptAt     *time.Time
	LastStatus        int
	LastError         string
}

// EventQuery selects outbox rows, newest change first.
type EventQuery struct {
	Endpoint string     // "" for every endpoint
	State    EventState // "" for every state
	Limit    int        // 1 to MaxListLimit
}

// EndpointFigures are one endpoint's outbox figures.
type EndpointFigures struct {
	Pending, Failed int64
	// OldestPending is the change time of the oldest pending row (zero when none).
	OldestPending time.Time
	// LastSuccess is the latest delivery (zero when none).
	LastSuccess time.Time
	// FailingSince is the change time of the oldest pending row that has failed at least once,
	// when no delivery succeeded after its first failure (zero when the endpoint is not failing).
	FailingSince time.Time
}

// EventStore is the outbox as the delivery worker and the webhooks commands use it. A Store
// implements it.
type EventStore interface {
	// ClaimEvents leases up to limit due rows of one endpoint (pending, next attempt at or before
	// now), oldest due first, for leaseFor. A row another instance holds is skipped.
	ClaimEvents(ctx context.Context, endpoint string, now time.Time, limit int, leaseFor time.Duration) ([]EventClaim, error)
	// RenewEventLeases extends the leases still held to until; ErrLeaseLost when any is gone.
	RenewEventLeases(ctx context.Context, leases []EventLease, until time.Time) error
	// FinishEvent records an attempt under its lease; ErrLeaseLost when the lease is gone.
	FinishEvent(ctx context.Context, o EventOutcome) error
	// FinishEvents records several attempts in one transaction, each on its own (its error,
	// ErrLeaseLost or nil, in the order of outcomes); the error is for the call as a whole.
	FinishEvents(ctx context.Context, outcomes []EventOutcome) ([]error, error)
	// EventMessages reads the messages with these ids, with their attempts (absent ids are left
	// out: retention erased them).
	EventMessages(ctx context.Context, ids []string) (map[string]*Message, error)
	// EventInboxEntries reads the inbox entries with these ids (absent ones are left out).
	EventInboxEntries(ctx context.Context, ids []string) (map[string]*InboxEntry, error)
	// ListEvents lists outbox rows, metadata only.
	ListEvents(ctx context.Context, q EventQuery) ([]EventRecord, error)
	// EventFigures returns each endpoint's figures (endpoints without rows are absent).
	EventFigures(ctx context.Context) (map[string]EndpointFigures, error)
	// CountRedeliverable counts one endpoint's delivered and failed rows changed at or after
	// since.
	CountRedeliverable(ctx context.Context, endpoint string, since time.Time) (int64, error)
	// Redeliver makes up to limit of those rows pending again, due at now with no attempt, in
	// one transaction with the audit record audit; it returns how many it changed.
	Redeliver(ctx context.Context, endpoint string, since, now time.Time, limit int, audit AuditEntry) (int, error)
}

// eventIDEncoding writes event ids in lower-case base32 without padding.
var eventIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// EventID is the id of the event that reports subject (a message or an inbox entry) at
// sequence: a function of the three, so that every delivery of one event, retries and
// redeliveries included, carries one webhook-id, and the events of every endpoint agree.
func EventID(eventType, subject string, sequence int64) string {
	sum := sha256.Sum256([]byte(eventType + "\x00" + subject + "\x00" + strconv.FormatInt(sequence, 10)))
	return "evt_" + eventIDEncoding.EncodeToString(sum[:16])
}

// IsEventType reports whether t is an event type.
func IsEventType(t string) bool {
	return slices.Contains(EventTypes(), t)
}

// ParseEventState reads an event state as the commands take it.
func ParseEventState(s string) (EventState, bool) {
	for _, st := range EventStates() {
		if strings.EqualFold(s, string(st)) {
			return st, true
		}
	}
	return "", false
}
