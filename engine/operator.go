package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"switchboard/packages"
)

// OperatorConfig wires an Operator.
type OperatorConfig struct {
	Store Store
	// Package gives the provider a new generation starts on (its sender profile's own); nil,
	// or a profile it does not know, keeps the message's current provider.
	Package *packages.Package
	Clock   Clock
	// BatchSize is how many messages one transaction of a bulk action changes: 1 to
	// MaxOperatorBatch; 0 means DefaultOperatorBatch.
	BatchSize int
}

// DefaultOperatorBatch is the bulk batch size when OperatorConfig.BatchSize is 0.
const DefaultOperatorBatch = 500

// ActorOperatorTool is the journal actor of actions taken with the command line.
const ActorOperatorTool = "operator-tool"

// Operator previews and applies the operator actions (docs/architecture.md, "Operate": retry, cancel, settle
// as sent or not-sent) on one message or in bulk. Every applied change is one guarded
// transition written with its audit record; a preview reads and changes nothing.
type Operator struct {
	cfg OperatorConfig
}

// NewOperator returns an Operator. It refuses a batch size out of range.
func NewOperator(cfg OperatorConfig) (*Operator, error) {
	if cfg.Store == nil || cfg.Clock == nil {
		return nil, errors.New("engine: operator needs a store and a clock")
	}
	if cfg.BatchSize == 0 {
		cfg.BatchSize = DefaultOperatorBatch
	}
	if cfg.BatchSize < 1 || cfg.BatchSize > MaxOperatorBatch {
		return nil, fmt.Errorf("engine: operator batch size %d is not between 1 and %d", cfg.BatchSize, MaxOperatorBatch)
	}
	return &Operator{cfg: cfg}, nil
}

// Preview returns what action a would do to message id now, changing nothing: the change, or
// ErrNotFound, or a message.not-eligible Problem.
func (o *Operator) Preview(ctx context.Context, a Action, id string) (Change, error) {
	m, err := o.cfg.Store.Message(ctx, id)
	if err != nil {
		return Change{}, err
	}
	return Eligible(a, m, o.cfg.Clock.Now())
}

// Apply applies action a to message id, journaled with actor, and returns the message as it
// then stands and the change made. A message that is not eligible is left as it is and
// refused with a message.not-eligible Problem; an absent one with ErrNotFound. A message that
// moved between the read and the write is refused by the store (Action.Refusal).
func (o *Operator) Apply(ctx context.Context, a Action, id, actor string) (*Message, Change, error) {
	m, err := o.cfg.Store.Message(ctx, id)
	if err != nil {
		return nil, Change{}, err
	}
	now := o.cfg.Clock.Now()
	c, err := Eligible(a, m, now)
	if err != nil {
		return nil, Change{}, err
	}
	after, gen, err := o.write(ctx, o.action(a, m, actor, now))
	if err != nil {
		return nil, Change{}, err
	}
	c.Generation = gen
	return after, c, nil
}

// write applies oa as one guarded transition of the store and returns the message as it then
// stands and its generation. The store's refusal (ErrNotFound, or Action.Refusal of the state
// it found) is returned as it is.
func (o *Operator) write(ctx context.Context, oa OperatorAction) (*Message, int, error) {
	a, id := oa.Action, oa.MessageID
	res, err := o.cfg.Store.ApplyOperatorActions(ctx, []OperatorAction{oa})
	if err != nil {
		return nil, 0, fmt.Errorf("apply %s to %s: %w", a, id, err)
	}
	if len(res) != 1 {
		return nil, 0, fmt.Errorf("apply %s to %s: the store answered %d results", a, id, len(res))
	}
	if res[0].Err != nil {
		return nil, 0, res[0].Err
	}
	after, err := o.cfg.Store.Message(ctx, id)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s after %s: %w", id, a, err)
	}
	return after, res[0].Generation, nil
}

// action builds the store's action, taken by an operator and journaled with actor, for a
// message m found eligible.
func (o *Operator) action(a Action, m *Message, actor string, now time.Time) OperatorAction {
	oa := OperatorAction{Action: a, MessageID: m.ID, At: now,
		Audit: AuditEntry{Event: a.AuditEvent(), Actor: actor, MessageID: m.ID, At: now}}
	if a == ActionCancel {
		oa.Reason = CancelReason(true)
	}
	if _, _, gen, _ := a.Transition(); gen && o.cfg.Package != nil {
		if sp := o.cfg.Package.SenderProfile(m.SenderProfile); sp != nil {
			oa.Provider = sp.Provider
		}
	}
	return oa
}

// Selection picks the messages of a bulk action: those in Status accepted before Before, of
// SenderProfile when it is set.
type Selection struct {
	Status        string
	SenderProfile string
	Before        time.Time
}

// BulkPreview is what a bulk action would do: how many messages it would change, and the
// changes of the first of them.
type BulkPreview struct {
	Action  Action
	Matched int64
	Sample  []Change
}

// BulkResult is what a bulk action did.
type BulkResult struct {
	Action  Action
	Matched int64 // eligible when the action started
	Applied int64 // changed
	Skipped int64 // changed by something else between the listing and the write
	Batches int   // transactions
}

// query turns a selection into the listing of the messages action a applies to. The status
// must be the action's from-state: a bulk action never quietly skips what it was asked for.
func (o *Operator) query(a Action, sel Selection) (MessageQuery, error) {
	from, _, gen, ok := a.Transition()
	if !ok {
		return MessageQuery{}, fmt.Errorf("engine: unknown operator action %q", a)
	}
	if !slices.Contains(Statuses(), sel.Status) {
		return MessageQuery{}, NewProblem(CodeRequestInvalid, "the status must be one of the message statuses")
	}
	if sel.Status != string(from) {
		return MessageQuery{}, &Problem{Code: CodeMessageNotEligible,
			Detail: fmt.Sprintf("%s applies to %s messages, not to %s ones", a.Verb(), from, sel.Status)}
	}
	if sel.Before.IsZero() {
		return MessageQuery{}, NewProblem(CodeRequestInvalid, "a bulk action needs a time to select messages accepted before")
	}
	return MessageQuery{Dispatch: from, SenderProfile: sel.SenderProfile, AcceptedBefore: sel.Before,
		PayloadKept: gen, Order: ScanOrder, Limit: o.cfg.BatchSize}, nil
}

// PreviewBulk counts the messages action a would change under sel and returns the changes of
// the first sample of them (at most MaxListLimit), changing nothing.
func (o *Operator) PreviewBulk(ctx context.Context, a Action, sel Selection, sample int) (BulkPreview, error) {
	q, err := o.query(a, sel)
	if err != nil {
		return BulkPreview{}, err
	}
	p := BulkPreview{Action: a}
	if p.Matched, err = o.cfg.Store.CountMessages(ctx, q); err != nil {
		return BulkPreview{}, fmt.Errorf("count messages to %s: %w", a, err)
	}
	if sample <= 0 || p.Matched == 0 {
		return p, nil
	}
	q.Limit = min(sample, MaxListLimit)
	page, err := o.cfg.Store.ListMessages(ctx, q)
	if err != nil {
		return BulkPreview{}, fmt.Errorf("list messages to %s: %w", a, err)
	}
	now := o.cfg.Clock.Now()
	for i := range page.Messages {
		if c, err := Eligible(a, &page.Messages[i], now); err == nil {
			p.Sample = append(p.Sample, c)
		}
	}
	return p, nil
}

// ApplyBulk applies action a to every message sel picks, journaled with actor, in batches of
// BatchSize messages (see ApplyBatch), so that memory stays bounded whatever the number of
// messages. progress, when set, is told after each batch how many messages were handled of how
// many matched at the start. A message that moved out of the action's from-state between the
// listing and the write is skipped, not an error.
func (o *Operator) ApplyBulk(ctx context.Context, a Action, sel Selection, actor string, progress func(done, total int64)) (BulkResult, error) {
	q, err := o.query(a, sel)
	if err != nil {
		return BulkResult{}, err
	}
	r := BulkResult{Action: a}
	if r.Matched, err = o.cfg.Store.CountMessages(ctx, q); err != nil {
		return r, fmt.Errorf("count messages to %s: %w", a, err)
	}
	cursor := ""
	for {
		b, err := o.ApplyBatch(ctx, a, sel, cursor, actor)
		if err != nil {
			return r, err
		}
		if b.Listed == 0 {
			return r, nil
		}
		r.Batches++
		r.Applied += b.Applied
		r.Skipped += b.Skipped
		if progress != nil {
			progress(r.Applied+r.Skipped, r.Matched)
		}
		if b.Next == "" {
			return r, nil
		}
		cursor = b.Next
	}
}

// BatchResult is what one batch of a bulk action did.
type BatchResult struct {
	Listed  int   // messages the batch listed
	Applied int64 // changed
	Skipped int64 // changed by something else between the listing and the write
	// Next is the cursor of the next batch; "" when this one was the last.
	Next string
}

// ApplyBatch applies action a to the next BatchSize messages sel picks after cursor ("" is the
// start), listed (metadata only) and then changed in one transaction, journaled with actor.
// Bulk actions of the command line (ApplyBulk) and of the API (Operations) are loops over it.
func (o *Operator) ApplyBatch(ctx context.Context, a Action, sel Selection, cursor, actor string) (BatchResult, error) {
	if err := ctx.Err(); err != nil {
		return BatchResult{}, err
	}
	q, err := o.query(a, sel)
	if err != nil {
		return BatchResult{}, err
	}
	q.After = cursor
	page, err := o.cfg.Store.ListMessages(ctx, q)
	if err != nil {
		return BatchResult{}, fmt.Errorf("list messages to %s: %w", a, err)
	}
	r := BatchResult{Listed: len(page.Messages), Next: page.Next}
	if r.Listed == 0 {
		r.Next = ""
		return r, nil
	}
	now := o.cfg.Clock.Now()
	actions := make([]OperatorAction, 0, len(page.Messages))
	for i := range page.Messages {
		actions = append(actions, o.action(a, &page.Messages[i], actor, now))
	}
	res, err := o.cfg.Store.ApplyOperatorActions(ctx, actions)
	if err != nil {
		return BatchResult{}, fmt.Errorf("apply %s to a batch of %d: %w", a, len(actions), err)
	}
	for _, x := range res {
		switch {
		case x.Err == nil:
			r.Applied++
		case skippable(x.Err):
			r.Skipped++
		default:
			return BatchResult{}, fmt.Errorf("apply %s to %s: %w", a, x.MessageID, x.Err)
		}
	}
	return r, nil
}
