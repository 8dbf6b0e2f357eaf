package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"switchboard/engine"
)

// Finish records the outcome of an attempt and applies the transition the engine decided, in
// one unit of a writer batch, fenced by the lease: both statements are guarded by
// id, dispatch = 'sending' and lease_token, so a stale worker's Finish changes nothing and
// returns an error wrapping engine.ErrLeaseLost. A dispatch that engine.Transitions lists no
// move to from sending is refused before anything is written.
//
// It closes the attempt row (started at the claim, finished at FinishedAt, with Attempt as
// outcome, Code and ProviderRef), sets the message's dispatch, report, next attempt time,
// counters, provider, provider reference (kept when ProviderRef is empty), dispatch code,
// reason (f.Reason, none included) and final time (when the new dispatch is final), clears the
// lease, and writes f.Audit. When ProviderRef is set, receipts that arrived for (provider,
// ProviderRef) before this Finish are applied now, in arrival order, moving the report only
// forward (and setting the reason of the one that reports undelivered).
func (s *Store) Finish(ctx context.Context, f engine.Finish) error {
	if f.Lease.MessageID == "" || f.Lease.Token == "" {
		return errors.New("store: finish: lease has no message id or token")
	}
	if !engine.Allowed(engine.DispatchSending, f.Dispatch) {
		return fmt.Errorf("store: finish %s: no transition moves a sending message to dispatch %q", f.Lease.MessageID, f.Dispatch)
	}
	if f.Report != "" && !slices.Contains(engine.ReportStates(), f.Report) {
		return fmt.Errorf("store: finish %s: unknown report %q", f.Lease.MessageID, f.Report)
	}
	if f.Attempt == "" || f.Attempt == engine.AttemptInProgress {
		return fmt.Errorf("store: finish %s: attempt outcome %q does not close an attempt", f.Lease.MessageID, f.Attempt)
	}
	if err := checkReason(f.Reason); err != nil {
		return fmt.Errorf("store: finish %s: %w", f.Lease.MessageID, err)
	}
	if f.FinishedAt.IsZero() {
		f.FinishedAt = s.clock.Now()
	}
	if f.Audit.Event == "" {
		f.Audit.Event = "attempt.finished"
	}
	if f.Audit.MessageID == "" {
		f.Audit.MessageID = f.Lease.MessageID
	}
	if f.Audit.At.IsZero() {
		f.Audit.At = f.FinishedAt
	}
	if f.Audit.Outcome == "" {
		f.Audit.Outcome = string(f.Attempt)
	}
	return s.submit(ctx, &finishOp{f: f})
}

// finishOp is one Finish on its way through the writer.
type finishOp struct{ f engine.Finish }

func (o *finishOp) apply(b *batch) error {
	// A lost lease is found by the first, guarded statement, before anything is written: it
	// is the one clean refusal. Anything else sends the batch down the savepoint path.
	return b.step(func() error { return o.finishIn(b) }, func(err error) bool { return errors.Is(err, engine.ErrLeaseLost) })
}

func (o *finishOp) finishIn(b *batch) error {
	f := &o.f
	q := &b.s.q.claim
	id, token, at := f.Lease.MessageID, f.Lease.Token, ms(f.FinishedAt)
	attempt := []any{string(f.Attempt), at, at, f.Code, f.ProviderRef, id, token}
	var final sql.NullInt64
	if f.Dispatch.Final() {
		final = sql.NullInt64{Int64: at, Valid: true}
	}
	report := nullString(string(f.Report))
	// The update's arguments but its last two, the id and the lease token.
	update := []any{string(f.Dispatch), report, report, report, at,
		msOpt(f.NextAttemptAt), f.ProviderAttempts, f.FallbackIndex, nullString(f.Provider),
		nullString(f.ProviderRef), f.DispatchCode, f.Reason.Code, string(f.Reason.By), final, nullString(string(outcomeClass(f.Attempt))), at}
	delete(b.reports, id) // its receipts in this batch run one by one, after it
	var pending bool      // whether receipts are kept for the reference the finish records
	var err error
	switch {
	case q.finishFolded != "" && b.pipelines():
		o.queueFolded(b, attempt, update)
		return nil
	case q.finishFolded != "":
		pending, err = o.finishFolded(b, attempt, update)
	default:
		pending, err = o.finishInSteps(b, attempt, update)
	}
	if err != nil {
		return err
	}
	if pending {
		return o.applyPending(b)
	}
	return nil
}

// applyPending applies the receipts kept for the reference the finish recorded.
func (o *finishOp) applyPending(b *batch) error {
	f := &o.f
	if err := b.applyPendingReceipts(f.Lease.MessageID, f.Provider, f.Report, f.ProviderRef, f.FinishedAt); err != nil {
		return fmt.Errorf("store: finish %s: %w", f.Lease.MessageID, err)
	}
	return nil
}

// finishInSteps closes the attempt, updates the message and journals the finish, one
// statement each (SQLite, where a statement is a call, not a round trip). It reports whether
// receipts are kept for the reference the finish recorded, which the update counts.
func (o *finishOp) finishInSteps(b *batch, attempt, update []any) (bool, error) {
	q := &b.s.q.claim
	id, token := o.f.Lease.MessageID, o.f.Lease.Token
	n, err := b.execN(q.finishAttempt, attempt...)
	if err != nil {
		return false, fmt.Errorf("store: finish %s: close attempt: %w", id, err)
	}
	if n == 0 {
		return false, fmt.Errorf("store: finish %s: %w", id, engine.ErrLeaseLost)
	}
	var kept int64
	switch err := b.get(&kept, q.finishUpdate, append(update, id, token, o.f.ProviderRef)...); {
	case isNoRows(err):
		// The guarded attempt insert just matched: only a broken invariant gets here, after a
		// write, so this is not the clean lease-lost refusal.
		return false, fmt.Errorf("store: finish %s: message row changed under its lease (no row updated)", id)
	case err != nil:
		return false, fmt.Errorf("store: finish %s: update message: %w", id, err)
	}
	if err := b.audit(o.f.Audit); err != nil {
		return false, fmt.Errorf("store: finish %s: %w", id, err)
	}
	o.changed(b)
	return kept > 0 && o.f.ProviderRef != "", nil
}

// finishFolded does what finishInSteps does in one statement (PostgreSQL): the audit record
// is inserted only with the message update, and the chain moves only when both happened. It
// reports whether receipts are kept for the reference the finish recorded.
func (o *finishOp) finishFolded(b *batch, attempt, update []any) (bool, error) {
	args, next := o.foldedArgs(b, attempt, update)
	var res foldedAnswer
	if err := b.get(&res, b.s.q.claim.finishFolded, args...); err != nil {
		return false, fmt.Errorf("store: finish %s: %w", o.f.Lease.MessageID, err)
	}
	if err := o.held(res); err != nil {
		return false, err
	}
	b.chain = next
	o.changed(b)
	return res.Pending > 0, nil
}

// queueFolded is finishFolded queued for the batch's next pipeline (pipeline.go): the chain
// moves now, as if the finish held; if it did not, the batch runs again without pipelining.
func (o *finishOp) queueFolded(b *batch, attempt, update []any) {
	args, next := o.foldedArgs(b, attempt, update)
	b.chain = next
	var res foldedAnswer
	b.later(laterRow{
		query: b.s.q.claim.finishFolded, args: args, many: b.s.q.claim.finishMany, key: o.f.Lease.MessageID,
		scan: func(r pgx.Row) error { return r.Scan(&res.Closed, &res.Updated, &res.Pending) },
		then: func() error {
			if err := o.held(res); err != nil {
				return err
			}
			o.changed(b)
			if res.Pending > 0 {
				return o.applyPending(b)
			}
			return nil
		},
	})
}

// changed marks what the finish changed for the outbox: the message, and its
// device.unregistered event when the finish carries one.
func (o *finishOp) changed(b *batch) {
	b.messageChanged(o.f.Lease.MessageID)
	b.deviceUnregistered(o.f.DeviceUnregistered)
}

// foldedAnswer is finishFolded's answer: attempts closed, messages updated, receipts kept for
// the reference.
type foldedAnswer struct {
	Closed  int64 `db:"closed"`
	Updated int64 `db:"updated"`
	Pending int64 `db:"pending"`
}

// foldedArgs are finishFolded's parameters, with the audit record that follows the batch's
// chain, and the chain after it.
func (o *finishOp) foldedArgs(b *batch, attempt, update []any) ([]any, chainState) {
	id, token := o.f.Lease.MessageID, o.f.Lease.Token
	audit, next := b.auditRow(o.f.Audit)
	args := make([]any, 0, len(attempt)+len(update)+4+len(audit))
	args = append(append(append(append(args, attempt...), update...), token), audit...)
	args = append(args, nullString(o.f.ProviderRef), nullString(o.f.Provider), id)
	return args, next
}

// held checks a folded finish's answer: a lost lease when it closed no attempt, a broken
// invariant when it closed one but updated no message.
func (o *finishOp) held(res foldedAnswer) error {
	id := o.f.Lease.MessageID
	switch {
	case res.Closed == 0:
		return fmt.Errorf("store: finish %s: %w", id, engine.ErrLeaseLost)
	case res.Updated != 1:
		return fmt.Errorf("store: finish %s: message row changed under its lease (%d rows)", id, res.Updated)
	}
	return nil
}

// outcomeClass is the outcome class an attempt outcome records on its message, or "" to keep
// the last one (an expired attempt never reached a provider).
func outcomeClass(a engine.AttemptOutcome) engine.OutcomeClass {
	switch a {
	case engine.AttemptAccepted:
		return engine.OutcomeAccepted
	case engine.AttemptTransient:
		return engine.OutcomeTransient
	case engine.AttemptPermanent:
		return engine.OutcomePermanent
	case engine.AttemptMaybeSent, engine.AttemptInterrupt:
		return engine.OutcomeMaybeSent
	}
	return ""
}

// pendingReceipt is a kept receipt waiting for its reference.
type pendingReceipt struct {
	ID         int64  `db:"id"`
	Report     string `db:"report"`
	Code       string `db:"code"`
	ReceivedAt int64  `db:"received_at"`
}

// applyPendingReceipts applies the kept receipts for the reference the message id now holds
// (with its provider and report as they stand after the update: those Finish set, else read
// back), in arrival order, and marks them consumed.
func (b *batch) applyPendingReceipts(id, provider string, report engine.Report, ref string, at time.Time) error {
	q := &b.s.q.receipt
	cur := struct {
		Provider string `db:"provider"`
		Report   string `db:"report"`
	}{provider, string(report)}
	if provider == "" || report == "" {
		if err := b.get(&cur, q.providerReport, id); err != nil {
			return fmt.Errorf("read provider: %w", err)
		}
	}
	var pending []pendingReceipt
	if err := b.selectRows(&pending, q.pending, cur.Provider, ref); err != nil {
		return fmt.Errorf("read kept receipts: %w", err)
	}
	if len(pending) == 0 {
		return nil
	}
	slices.SortFunc(pending, func(a, b pendingReceipt) int { return cmp.Compare(a.ID, b.ID) })
	// The receipts are walked in arrival order by the engine's rule (Advances): each that moves
	// the report so far forward is journaled, and the report they lead to (with the reason of
	// the last of them) is applied as one guarded update, journaled with the last of them.
	report = engine.Report(cur.Report)
	var audits []engine.AuditEntry
	reportedAt, code := int64(0), ""
	for _, p := range pending {
		next := engine.Report(p.Report)
		if !report.Advances(next) {
			continue
		}
		report, reportedAt, code = next, p.ReceivedAt, p.Code
		audits = append(audits, receiptAudit(cur.Provider, id, next, p.Code, at))
	}
	if len(audits) > 0 {
		last := len(audits) - 1
		for _, a := range audits[:last] {
			if err := b.audit(a); err != nil {
				return err
			}
		}
		moved, err := b.applyReceipt(id, report, engine.ReceiptReason(report, code), reportedAt, audits[last], at)
		if err != nil {
			return fmt.Errorf("apply kept receipts: %w", err)
		}
		if !moved {
			return fmt.Errorf("apply kept receipts: the report of %s changed under them", id)
		}
		b.messageChanged(id)
	}
	if err := b.execCached(q.markApplied, ms(at), cur.Provider, ref); err != nil {
		return fmt.Errorf("consume kept receipts: %w", err)
	}
	return nil
}
