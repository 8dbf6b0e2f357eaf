package engine

import (
	"context"
	"time"
)

// Store is durable state. Every method that changes state is one transaction that also writes
// its audit records. No method returns an unbounded set of payloads: automatic reads are bounded
// pages, and diagnostics read metadata only.
type Store interface {
	// Accept writes a batch of submissions. Implementations group concurrent calls into shared
	// transactions (group commit); each acceptance succeeds or fails on its own. Results are in
	// the order of the input.
	Accept(ctx context.Context, batch []Acceptance) []AcceptResult
	// Message returns the metadata of one message with its attempts, or ErrNotFound.
	Message(ctx context.Context, id string) (*Message, error)
	// ExpireDue moves at most limit queued messages whose expiresAt has passed to expired,
	// each with an attempt row of outcome expired and an audit record. It returns how many.
	ExpireDue(ctx context.Context, now time.Time, limit int) (int, error)
	// ClaimPage claims due messages under fresh leases, as docs/architecture.md, "Dispatch" and
	// docs/operations.md, "Delivery and leases" describe, in at most three statements whatever the page size.
	ClaimPage(ctx context.Context, now time.Time, limits PageLimits, leaseFor time.Duration) (Page, error)
	// RenewLease extends the leases still held; it returns ErrLeaseLost if any is gone.
	RenewLease(ctx context.Context, leases []LeaseRef, until time.Time) error
	// Finish records the outcome of an attempt and applies the transition the engine decided,
	// only where the message is still sending under lease.Token; otherwise ErrLeaseLost. A
	// dispatch that Transitions lists no move to from sending is refused with an error.
	Finish(ctx context.Context, f Finish) error
	// LapsedLeases returns up to limit messages in sending whose lease expired before now,
	// with the token of that lapsed lease, so the engine can Finish them as interrupted.
	LapsedLeases(ctx context.Context, now time.Time, limit int) ([]LapsedClaim, error)
	// RecordReceipts records receipts that Receipts admitted (each has a provider reference and
	// a report some ReportStep leads to; any other is refused with an error, nothing written).
	// It matches each by (provider, provider reference) and applies its step to each matched
	// message as a guarded update (the report changes only from one of ReportsBefore(report)),
	// in one transaction with audit records. Receipts for a reference not yet known are kept,
	// and applied when an attempt records that reference.
	RecordReceipts(ctx context.Context, provider string, receipts []Receipt, now time.Time) (ReceiptTally, error)
	// Stats reads queue figures for GET /v1/slo, from metadata only.
	Stats(ctx context.Context, now time.Time) (Stats, error)
	// Ready returns nil when the database is reachable and migrated.
	Ready(ctx context.Context) error
	// Close stops background work (the group-commit writer) and closes the database.
	Close() error

	// ListMessages returns the metadata of at most q.Limit messages matching q, in q.Order,
	// never a payload, and without attempts unless q.WithAttempts. MessagePage.Next continues the listing in the same
	// order (pass it as q.After); it is "" when the page was the last. A cursor the store did
	// not make is refused with an error wrapping ErrInvalidCursor.
	ListMessages(ctx context.Context, q MessageQuery) (MessagePage, error)
	// CountMessages counts the messages matching q's filters (Order, After and Limit are
	// ignored), from metadata only.
	CountMessages(ctx context.Context, q MessageQuery) (int64, error)
	// ApplyOperatorActions applies at most MaxOperatorBatch operator actions in one
	// transaction. Each is a guarded transition of Action.Transition with its audit record, and
	// succeeds or fails on its own: its OperatorResult.Err is ErrNotFound, or Action.Refusal of
	// the state found when the message is not in the action's from-state (ErrDispatchStarted or
	// ErrTerminal for a cancel, ErrNotEligible for the others), or ErrNotEligible when a new
	// generation needs a payload retention erased. This is the store's one cancel. The error is
	// for the batch as a whole (storage, closed store).
	ApplyOperatorActions(ctx context.Context, actions []OperatorAction) ([]OperatorResult, error)
	// CountErasable counts what EraseBatch calls of kind with cutoff would erase in all.
	CountErasable(ctx context.Context, kind EraseKind, cutoff time.Time) (int64, error)
	// EraseBatch erases at most b.Limit (at most MaxEraseBatch) items of one kind whose
	// retention ended at or before b.Cutoff, in one transaction with one audit record when it
	// erased anything. It never touches a queued, sending or unknown message.
	EraseBatch(ctx context.Context, b EraseBatch) (EraseResult, error)
}

// Acceptance is one submission ready to be made durable.
type Acceptance struct {
	Idempotency IdempotencyRecord
	Message     Message // metadata; ID, Dispatch queued, Report none, times, generation 1
	Payload     Payload
	// DailyLimit, when positive, is the access profile's daily limit, counted per UTC day in the
	// same transaction; over it the acceptance fails with ErrQuotaExceeded.
	DailyLimit int
	Audit      AuditEntry
}

// IdempotencyRecord identifies a submission by its caller and key, and keeps its first answer.
type IdempotencyRecord struct {
	Issuer      string
	Subject     string
	Key         string
	RequestHash []byte
	Response    []byte    // the exact 202 body
	ExpiresAt   time.Time // end of the submission receipt window
}

// AcceptResult is the answer for one Acceptance: the stored 202 body (of this acceptance, or of
// the first one when Replayed), or an error (ErrIdempotencyKeyReused, ErrIdempotencyExpired,
// ErrQuotaExceeded, or a storage failure).
type AcceptResult struct {
	Response  []byte
	MessageID string
	Replayed  bool
	Err       error
}

// Payload is the erasable part of a message: its address and rendered parts.
type Payload struct {
	Recipient   string            `json:"recipient"`
	Parts       map[string]string `json:"parts"`
	ContentType string            `json:"contentType,omitempty"`
}

// PageLimits bounds one claimed page.
type PageLimits struct {
	MaxEntries int
	MaxBytes   int64
}

// Page is one claimed page.
type Page struct {
	Claims []Claim
	Bytes  int64
	// OversizedDue counts due messages larger than the whole byte budget; they are skipped
	// without being loaded.
	OversizedDue int
	// ByteBudgetCut is true when the page stopped at a message that would overflow the budget.
	ByteBudgetCut bool
}

// Claim is one claimed message with its payload, held under a lease.
type Claim struct {
	Message Message
	Payload Payload
	Lease   LeaseRef
}

// LeaseRef is a claim's lease: the token that fences every write, and when it lapses.
type LeaseRef struct {
	MessageID string
	Token     string
	ExpiresAt time.Time
}

// LapsedClaim is a sending message whose lease lapsed.
type LapsedClaim struct {
	Message Message
	Lease   LeaseRef
}

// Finish is the transition the engine decided for one attempt.
type Finish struct {
	Lease         LeaseRef
	Attempt       AttemptOutcome // how the attempt row is closed
	Code          string
	ProviderRef   string
	Dispatch      Dispatch // the message's next dispatch state
	Report        Report   // the message's report after this attempt
	NextAttemptAt time.Time
	// Counters for the next attempt: attempts made on the current provider in this generation,
	// and which provider (0 = the profile's, i = fallbackProviders[i-1]).
	ProviderAttempts int
	FallbackIndex    int
	Provider         string
	DispatchCode     string
	// Reason is what the message is left with: Decision.Reason, recorded in the same write.
	Reason     Reason
	FinishedAt time.Time
	Audit      AuditEntry
	// DeviceUnregistered, when set, is a device.unregistered event to write with the finish,
	// for the endpoints subscribed to the message's access profile.
	DeviceUnregistered *DeviceUnregistered
}

// ReceiptTally counts what a batch of receipts did.
type ReceiptTally struct {
	Applied   int // moved a report forward
	Stale     int // matched but did not move the report (duplicate, late, out of order)
	Unmatched int // no message with that reference yet; kept for later
}

// Stats are the stored queue figures behind GET /v1/slo.
type Stats struct {
	QueuedEntries       int64
	QueuedBytes         int64
	ClaimedEntries      int64
	ClaimedBytes        int64
	OldestDueAge        time.Duration
	OversizedDueEntries int64
	Dispatch            map[Dispatch]int64
}

// AuditEntry is one journal record. It never holds a recipient, content or template data:
// callers and recipients appear only as keyed pseudonyms.
type AuditEntry struct {
	Event     string // for example "message.accepted", "message.cancelled", "attempt.finished"
	Actor     string // a caller pseudonym, "operator-tool" or "worker"
	MessageID string
	Outcome   string
	At        time.Time
}
