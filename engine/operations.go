package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
)

// OperationsConfig wires Operations.
type OperationsConfig struct {
	// Operator applies each batch: the same code as the command line's bulk actions.
	Operator *Operator
	Store    OperationStore
	Clock    Clock
	Logger   *slog.Logger
	// LeaseFor is how long an instance holds a running operation between two batches before
	// another may take it over; 0 means DefaultOperationLease.
	LeaseFor time.Duration
}

// DefaultOperationLease is the lease of a running operation when OperationsConfig.LeaseFor is 0.
const DefaultOperationLease = time.Minute

// Operations runs the bulk operator actions of the API (POST /v1/operations): it checks and
// counts what an action would change, stores the operation, and works on it in the background
// in bounded batches (Operator.ApplyBatch), recording after each batch how far it got. The
// record is durable and fenced by a lease, so that any instance sharing the database answers
// for an operation, and one whose instance died is taken over after its cursor (RecoverLapsed).
type Operations struct {
	cfg    OperationsConfig
	base   context.Context
	stop   context.CancelFunc
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
}

// NewOperations returns Operations; Close stops its background work.
func NewOperations(cfg OperationsConfig) (*Operations, error) {
	if cfg.Operator == nil || cfg.Store == nil || cfg.Clock == nil {
		return nil, errors.New("engine: operations need an operator, a store and a clock")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LeaseFor <= 0 {
		cfg.LeaseFor = DefaultOperationLease
	}
	base, stop := context.WithCancel(context.Background())
	return &Operations{cfg: cfg, base: base, stop: stop}, nil
}

// Preview counts the messages action a would change under sel and returns the first sample of
// them, changing nothing (Operator.PreviewBulk).
func (o *Operations) Preview(ctx context.Context, a Action, sel Selection, sample int) (BulkPreview, error) {
	return o.cfg.Operator.PreviewBulk(ctx, a, sel, sample)
}

// Start checks and counts the selection as Preview does, stores a running operation with a
// journal record naming actor, and starts working on it. It returns the operation as stored.
func (o *Operations) Start(ctx context.Context, a Action, sel Selection, actor string) (*Operation, error) {
	p, err := o.cfg.Operator.PreviewBulk(ctx, a, sel, 0)
	if err != nil {
		return nil, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("engine: operation id: %w", err)
	}
	now := o.cfg.Clock.Now()
	op := Operation{
		ID: id.String(), Action: a, Selection: sel, Actor: actor, State: OperationRunning,
		Total: p.Matched, CreatedAt: now, UpdatedAt: now,
		Lease: LeaseRef{Token: uuid.NewString(), ExpiresAt: now.Add(o.cfg.LeaseFor)},
	}
	audit := AuditEntry{Event: "operation.started", Actor: actor, At: now,
		Outcome: fmt.Sprintf("%s %s messages: %d", a, sel.Status, p.Matched)}
	if err := o.cfg.Store.CreateOperation(ctx, op, audit); err != nil {
		return nil, fmt.Errorf("engine: start operation: %w", err)
	}
	o.launch(op)
	return &op, nil
}

// Get returns an operation as stored, or ErrOperationNotFound.
func (o *Operations) Get(ctx context.Context, id string) (*Operation, error) {
	return o.cfg.Store.Operation(ctx, id)
}

// RecoverLapsed takes over every running operation whose lease lapsed (its instance died or
// stopped) and goes on with it after its cursor. It returns how many it took over.
func (o *Operations) RecoverLapsed(ctx context.Context) (int, error) {
	n := 0
	for {
		now := o.cfg.Clock.Now()
		op, err := o.cfg.Store.ClaimLapsedOperation(ctx, now, uuid.NewString(), now.Add(o.cfg.LeaseFor))
		if err != nil || op == nil {
			return n, err
		}
		o.cfg.Logger.Info("taking over an operation whose lease lapsed", "operation", op.ID, "done", op.Done, "total", op.Total)
		o.launch(*op)
		n++
	}
}

// Run calls RecoverLapsed every half lease until ctx ends.
func (o *Operations) Run(ctx context.Context) error {
	t := time.NewTicker(o.cfg.LeaseFor / 2)
	defer t.Stop()
	for {
		if _, err := o.RecoverLapsed(ctx); err != nil && ctx.Err() == nil {
			o.cfg.Logger.Warn("recovering lapsed operations", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Close stops the operations this instance works on after their current batch and waits for
// them. Their leases lapse, and an instance (this one after a restart, or another) goes on
// with them.
func (o *Operations) Close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.stop()
	o.wg.Wait()
}

// launch works on op in the background unless Close was called.
func (o *Operations) launch(op Operation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.wg.Go(func() { o.work(op) })
}

// work applies op's batches one after another, recording each under the operation's lease,
// until the selection is exhausted, a batch fails, the lease is lost or Close is called.
func (o *Operations) work(op Operation) {
	log := o.cfg.Logger.With("operation", op.ID, "action", string(op.Action))
	cursor := op.Cursor
	for {
		b, err := o.cfg.Operator.ApplyBatch(o.base, op.Action, op.Selection, cursor, op.Actor)
		if o.base.Err() != nil {
			return // stopping: the lease lapses and the operation goes on elsewhere
		}
		now := o.cfg.Clock.Now()
		p := OperationProgress{ID: op.ID, Token: op.Lease.Token, Done: b.Applied, Failed: b.Skipped,
			Cursor: b.Next, State: OperationRunning, At: now, LeaseUntil: now.Add(o.cfg.LeaseFor)}
		switch {
		case err != nil:
			log.Error("an operation's batch failed", "err", err)
			p.State, p.Error, p.Cursor = OperationFailed, "a batch could not be applied: the database refused or was unreachable", cursor
		case b.Next == "":
			p.State, p.Cursor = OperationDone, cursor
		}
		if err := o.cfg.Store.RecordOperationProgress(o.base, p); err != nil {
			if !errors.Is(err, ErrLeaseLost) {
				log.Warn("recording an operation's progress", "err", err)
			}
			return // another instance goes on from the last recorded cursor
		}
		if p.State != OperationRunning {
			return
		}
		cursor = b.Next
	}
}
