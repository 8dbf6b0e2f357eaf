package engine

import (
	"context"
	"time"
)

// OperationState is where a bulk operation stands.
type OperationState string

const (
	// OperationRunning: created by Operations.Start and worked on in batches by the instance
	// that holds its lease, or by the one that took it over after that lease lapsed.
	OperationRunning OperationState = "running"
	// OperationDone: every batch ran; final.
	OperationDone OperationState = "done"
	// OperationFailed: a batch met an error that is not a message's (storage); final. The
	// changes of the batches before it stay applied.
	OperationFailed OperationState = "failed"
)

// Operation is a bulk operator action and its progress, kept durably so that any instance
// sharing the database can answer for it and take it over.
type Operation struct {
	ID        string
	Action    Action
	Selection Selection
	Actor     string // the journal actor of every change it makes
	State     OperationState
	// Total counts the messages it matched when it started; Done those it changed; Failed
	// those it could not change because they had left the action's state (or were erased)
	// by the time their batch ran.
	Total, Done, Failed int64
	// Cursor is where the next batch starts: a ScanOrder cursor, "" before the first.
	Cursor     string
	Error      string // why it failed, safe to show an operator
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
	Lease      LeaseRef // held while it runs
}

// OperationProgress is what one batch of a running operation adds, written under its lease.
type OperationProgress struct {
	ID, Token    string
	Done, Failed int64 // added to the operation's counts
	Cursor       string
	State        OperationState // running, or the final state
	Error        string
	At           time.Time
	LeaseUntil   time.Time // the renewed lease (ignored once final)
}

// OperationStore keeps operations. Every method is one transaction.
type OperationStore interface {
	// CreateOperation stores a new running operation under op.Lease, with a journal record of
	// who started what.
	CreateOperation(ctx context.Context, op Operation, audit AuditEntry) error
	// Operation returns one operation, or ErrOperationNotFound.
	Operation(ctx context.Context, id string) (*Operation, error)
	// RecordOperationProgress adds a batch's counts and moves the cursor, only while the
	// operation is running under p.Token; otherwise ErrLeaseLost.
	RecordOperationProgress(ctx context.Context, p OperationProgress) error
	// ClaimLapsedOperation takes over one running operation whose lease lapsed before now,
	// under a new lease (token, until), and returns it; nil when there is none.
	ClaimLapsedOperation(ctx context.Context, now time.Time, token string, until time.Time) (*Operation, error)
}

// ErrOperationNotFound is returned for an operation id that no operation has.
var ErrOperationNotFound = NewProblem(CodeRequestNotFound, "no such operation")
