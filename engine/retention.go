package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
)

// EraseKind names one step of retention: what it erases and after how long (docs/operations.md, "Retention and erasure").
type EraseKind string

const (
	// ErasePayloads: the rendered parts and recipient of a message in a final state (submitted,
	// failed, cancelled, expired), payloadDays after it became final. The record stays.
	ErasePayloads EraseKind = "payloads"
	// EraseInboxPayloads: the payload of a received peer message, payloadDays after it arrived.
	EraseInboxPayloads EraseKind = "inbox-payloads"
	// EraseSubmissionReceipts: the stored answer and request hash of an idempotency record,
	// submissionReceiptDays after acceptance. The key stays spent: it answers 410 from then on.
	EraseSubmissionReceipts EraseKind = "submission-receipts"
	// EraseRecords: the whole record of a message in a final state (metadata, attempts, and its
	// payload if still there), recordDays after it became final.
	EraseRecords EraseKind = "records"
	// EraseInboxRecords: a received peer message's entry, recordDays after it arrived.
	EraseInboxRecords EraseKind = "inbox-records"
	// EraseProviderReceipts: delivery reports kept because their reference was not known yet,
	// recordDays after they arrived.
	EraseProviderReceipts EraseKind = "provider-receipts"
	// EraseWebhookEvents: outbox rows already delivered or failed, eventDays after they became
	// so (docs/webhooks.md). Pending rows are never erased.
	EraseWebhookEvents EraseKind = "webhook-events"
)

// DefaultEventDays is how long delivered and failed events are kept when the policy says 0.
const DefaultEventDays = 7

// EraseKinds lists every kind in the order a sweep runs them: payloads and recipients first,
// receipts after their window, records later.
func EraseKinds() []EraseKind {
	return []EraseKind{ErasePayloads, EraseInboxPayloads, EraseSubmissionReceipts,
		EraseRecords, EraseInboxRecords, EraseProviderReceipts, EraseWebhookEvents}
}

// MaxEraseBatch bounds what one EraseBatch call (one transaction) erases.
const MaxEraseBatch = 1000

// EraseBatch is one bounded step of retention.
type EraseBatch struct {
	Kind EraseKind
	// Cutoff: items whose clock (final time, arrival, acceptance) is at or before it go.
	Cutoff time.Time
	Limit  int       // 1 to MaxEraseBatch
	At     time.Time // when the erasure happens (payloadErasedAt, erased_at)
	// Audit is the batch's journal record. A store fills Event ("retention.erased"), At and
	// Outcome ("<kind> <n> erased, cutoff <time>") when they are empty.
	Audit AuditEntry
}

// EraseResult is what one EraseBatch erased.
type EraseResult struct {
	Erased int
}

// RetentionPolicy is the runtime file's retention, in days (docs/runtime.md, "retention").
type RetentionPolicy struct {
	PayloadDays           int
	RecordDays            int
	SubmissionReceiptDays int
	// EventDays is how long delivered and failed webhook events are kept; 0 means
	// DefaultEventDays.
	EventDays int
}

// Validate refuses non-positive periods and records kept shorter than payloads.
func (p RetentionPolicy) Validate() error {
	if p.PayloadDays < 1 || p.RecordDays < 1 || p.SubmissionReceiptDays < 1 || p.EventDays < 0 {
		return errors.New("engine: retention periods must be at least one day")
	}
	if p.RecordDays < p.PayloadDays {
		return errors.New("engine: retention recordDays must be at least payloadDays")
	}
	return nil
}

// Cutoff is the latest clock value of kind that has expired by before.
func (p RetentionPolicy) Cutoff(kind EraseKind, before time.Time) time.Time {
	days := p.RecordDays
	switch kind {
	case ErasePayloads, EraseInboxPayloads:
		days = p.PayloadDays
	case EraseSubmissionReceipts:
		days = p.SubmissionReceiptDays
	case EraseWebhookEvents:
		days = p.EventDays
		if days == 0 {
			days = DefaultEventDays
		}
	}
	return before.Add(-time.Duration(days) * 24 * time.Hour)
}

// RetentionConfig wires a Retention.
type RetentionConfig struct {
	Store  Store
	Clock  Clock
	Logger *slog.Logger
	Policy RetentionPolicy
	// BatchSize is what one transaction erases, 1 to MaxEraseBatch; 0 means MaxEraseBatch.
	BatchSize int
	// Interval is the time between sweeps of Run; 0 means one hour.
	Interval time.Duration
	// Actor is the journal actor; "" means "worker" (the sweep of serve).
	Actor string
	// Observe, when set, is told what each batch erased (for metrics).
	Observe func(kind EraseKind, erased int)
	// Swept, when set, is told of each sweep of Run that went through every kind, whether it
	// erased anything or not (for metrics: a sweep that failed or that another instance took
	// is not told).
	Swept func(RetentionReport)
}

// Retention erases what the retention policy no longer allows to keep, in bounded batches,
// each its own transaction with its audit record. It never touches a queued, sending or unknown
// message: only final messages have a final time, and stores check the state again.
type Retention struct {
	cfg       RetentionConfig
	log       *slog.Logger
	scrubOwed atomic.Bool // the last Scrub failed
}

// NewRetention returns a Retention, refusing an invalid policy or batch size.
func NewRetention(cfg RetentionConfig) (*Retention, error) {
	if cfg.Store == nil || cfg.Clock == nil {
		return nil, errors.New("engine: retention needs a store and a clock")
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = MaxEraseBatch
	}
	if cfg.BatchSize < 1 || cfg.BatchSize > MaxEraseBatch {
		return nil, fmt.Errorf("engine: retention batch size %d is not between 1 and %d", cfg.BatchSize, MaxEraseBatch)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Hour
	}
	if cfg.Actor == "" {
		cfg.Actor = "worker"
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Retention{cfg: cfg, log: cfg.Logger}, nil
}

// RetentionStep is one kind's part of a run.
type RetentionStep struct {
	Kind    EraseKind
	Cutoff  time.Time
	Count   int64 // to erase (preview) or erased
	Batches int   // transactions that erased something
}

// RetentionReport is a whole run, as of Before.
type RetentionReport struct {
	Before time.Time
	Steps  []RetentionStep
}

// Total is the number of items of every kind.
func (r RetentionReport) Total() int64 {
	var n int64
	for _, s := range r.Steps {
		n += s.Count
	}
	return n
}

// checkBefore refuses a cutoff after now: retention erases only what already expired.
func (r *Retention) checkBefore(before time.Time) error {
	if before.IsZero() {
		return NewProblem(CodeRequestInvalid, "the retention cutoff is not set")
	}
	if before.After(r.cfg.Clock.Now()) {
		return NewProblem(CodeRequestInvalid, "the retention cutoff is in the future; only what expired by now may be erased")
	}
	return nil
}

// Preview counts what Erase(before) would erase, kind by kind, changing nothing.
func (r *Retention) Preview(ctx context.Context, before time.Time) (RetentionReport, error) {
	if err := r.checkBefore(before); err != nil {
		return RetentionReport{}, err
	}
	rep := RetentionReport{Before: before}
	for _, k := range EraseKinds() {
		cut := r.cfg.Policy.Cutoff(k, before)
		n, err := r.cfg.Store.CountErasable(ctx, k, cut)
		if err != nil {
			return rep, fmt.Errorf("count %s to erase: %w", k, err)
		}
		rep.Steps = append(rep.Steps, RetentionStep{Kind: k, Cutoff: cut, Count: n})
	}
	return rep, nil
}

// Erase erases everything whose retention ended by before, kind by kind in EraseKinds order,
// in batches of BatchSize, each its own transaction with its audit record. progress, when set,
// is told what each batch erased. A cancelled ctx stops it between batches; what was erased
// stays erased, and the report says how far it got. When the store is shared by several
// processes (SweepLocker) and another one is sweeping, it erases nothing and returns
// ErrSweepBusy.
func (r *Retention) Erase(ctx context.Context, before time.Time, progress func(kind EraseKind, erased int)) (RetentionReport, error) {
	if err := r.checkBefore(before); err != nil {
		return RetentionReport{}, err
	}
	if l, ok := r.cfg.Store.(SweepLocker); ok {
		release, held, err := l.LockSweep(ctx)
		if err != nil {
			return RetentionReport{}, fmt.Errorf("take the retention lock: %w", err)
		}
		if !held {
			return RetentionReport{}, ErrSweepBusy
		}
		defer release()
	}
	rep := RetentionReport{Before: before}
	var err error
	for _, k := range EraseKinds() {
		step := RetentionStep{Kind: k, Cutoff: r.cfg.Policy.Cutoff(k, before)}
		err = r.eraseKind(ctx, &step, progress)
		rep.Steps = append(rep.Steps, step)
		if err != nil {
			break
		}
	}
	if s, ok := r.cfg.Store.(Scrubber); ok && (rep.Total() > 0 || r.scrubOwed.Load()) {
		// Also after a cancelled run: what it erased must leave the files too. A scrub that
		// failed is owed to the next run, whatever that one erases.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), scrubTimeout)
		defer cancel()
		serr := s.Scrub(sctx)
		r.scrubOwed.Store(serr != nil)
		if serr != nil {
			err = errors.Join(err, fmt.Errorf("clear the erased bytes from the database files: %w", serr))
		}
	}
	return rep, err
}

// scrubTimeout bounds the Scrub after a run.
const scrubTimeout = 5 * time.Minute

// Scrubber is implemented by stores whose files keep erased bytes until a later pass (the
// write-ahead log of SQLite, the dead row versions of PostgreSQL). Erase calls Scrub once after
// a run that erased anything, still holding the retention lock, so that erased means gone from
// the files as far as the store can make it so (docs/operations.md, "Retention and erasure").
type Scrubber interface {
	Scrub(ctx context.Context) error
}

// eraseKind runs batches of one kind until one erases less than a full batch.
func (r *Retention) eraseKind(ctx context.Context, step *RetentionStep, progress func(EraseKind, int)) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		res, err := r.cfg.Store.EraseBatch(ctx, EraseBatch{Kind: step.Kind, Cutoff: step.Cutoff,
			Limit: r.cfg.BatchSize, At: r.cfg.Clock.Now(), Audit: AuditEntry{Actor: r.cfg.Actor}})
		if err != nil {
			return fmt.Errorf("erase %s: %w", step.Kind, err)
		}
		if res.Erased > 0 {
			step.Count += int64(res.Erased)
			step.Batches++
			if r.cfg.Observe != nil {
				r.cfg.Observe(step.Kind, res.Erased)
			}
			if progress != nil {
				progress(step.Kind, res.Erased)
			}
		}
		if res.Erased < r.cfg.BatchSize {
			return nil
		}
	}
}

// SweepLocker is implemented by stores that several processes share (PostgreSQL): LockSweep
// takes the store-wide retention lock without waiting, so that two sweeps never run at once.
// ok is false when another process holds it; release frees it.
type SweepLocker interface {
	LockSweep(ctx context.Context) (release func(), ok bool, err error)
}

// ErrSweepBusy is returned by Erase when another process sharing the store is sweeping.
var ErrSweepBusy = errors.New("engine: another instance is running a retention sweep")

// Sweep erases what expired by the clock's now: the hourly sweep's work.
func (r *Retention) Sweep(ctx context.Context) (RetentionReport, error) {
	return r.Erase(ctx, r.cfg.Clock.Now(), nil)
}

// Run sweeps at once and then every Interval until ctx ends. A failed sweep is logged and
// tried again at the next interval.
func (r *Retention) Run(ctx context.Context) {
	tick := time.NewTicker(r.cfg.Interval)
	defer tick.Stop()
	for {
		rep, err := r.Sweep(ctx)
		if err == nil && r.cfg.Swept != nil {
			r.cfg.Swept(rep)
		}
		switch {
		case errors.Is(err, ErrSweepBusy):
			r.log.Info("retention sweep skipped: another instance is sweeping")
		case err != nil && ctx.Err() == nil:
			r.log.Warn("retention sweep failed", "err", err)
		case err == nil && rep.Total() > 0:
			attrs := []any{"before", rep.Before}
			for _, s := range rep.Steps {
				attrs = append(attrs, string(s.Kind), s.Count)
			}
			r.log.Info("retention sweep erased", attrs...)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
