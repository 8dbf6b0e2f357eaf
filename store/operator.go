package store

import (
	"context"
	"database/sql"
	"fmt"

	"switchboard/engine"
)

// ApplyOperatorActions applies up to engine.MaxOperatorBatch operator actions in one writer
// request, each in its own unit of the batch transaction with its audit record: an action that
// is refused (engine.ErrNotFound, or engine.Action.Refusal of the state found: for a cancel
// engine.ErrDispatchStarted or engine.ErrTerminal) leaves nothing behind and the others go on.
// Results are in the order of actions. It is the store's one cancel, for the API and the
// command line alike.
//
// retry and settle as not-sent start a new generation: generation+1, no attempt yet, the
// action's Provider (when set) with no fallback, due at At, not final, no provider reference;
// they are refused for a message whose payload was erased. cancel and settle as sent make the
// message final at At. cancel records the action's Reason (an operator's cancel when it has
// none); the others clear the message's reason.
func (s *Store) ApplyOperatorActions(ctx context.Context, actions []engine.OperatorAction) ([]engine.OperatorResult, error) {
	if len(actions) == 0 {
		return nil, nil
	}
	if len(actions) > engine.MaxOperatorBatch {
		return nil, fmt.Errorf("store: operator: %d actions in one batch, at most %d", len(actions), engine.MaxOperatorBatch)
	}
	o := &operatorOp{q: &s.q.operator, actions: make([]engine.OperatorAction, len(actions))}
	for i, a := range actions {
		if _, _, _, ok := a.Action.Transition(); !ok || a.MessageID == "" {
			return nil, fmt.Errorf("store: operator: action %q on message %q is not valid", a.Action, a.MessageID)
		}
		if a.At.IsZero() {
			a.At = s.clock.Now()
		}
		if a.Action == engine.ActionCancel && a.Reason.None() {
			a.Reason = engine.CancelReason(true)
		}
		if err := checkReason(a.Reason); err != nil {
			return nil, fmt.Errorf("store: operator: %s %s: %w", a.Action, a.MessageID, err)
		}
		o.actions[i] = a
	}
	if err := s.submit(ctx, o); err != nil {
		return nil, err
	}
	return o.results, nil
}

// operatorOp is one ApplyOperatorActions on its way through the writer.
type operatorOp struct {
	q       *operatorSQL
	actions []engine.OperatorAction
	results []engine.OperatorResult
}

func (o *operatorOp) apply(b *batch) error {
	o.results = make([]engine.OperatorResult, len(o.actions))
	for i := range o.actions {
		a := &o.actions[i]
		from, to, _, _ := a.Action.Transition()
		r := engine.OperatorResult{MessageID: a.MessageID, From: from, To: to}
		r.Err = b.unit(func() error {
			gen, err := o.applyOne(b, a)
			r.Generation = gen
			return err
		})
		if b.poison != nil {
			return b.poison
		}
		o.results[i] = r
	}
	return nil
}

// applyOne runs one guarded transition and its audit record.
func (o *operatorOp) applyOne(b *batch, a *engine.OperatorAction) (int, error) {
	from, to, _, _ := a.Action.Transition()
	at := ms(a.At)
	var gen int
	var err error
	switch a.Action {
	case engine.ActionCancel:
		err = b.get(&gen, o.q.cancel, at, at, a.Reason.Code, string(a.Reason.By), a.MessageID)
	case engine.ActionSettleSent:
		err = b.get(&gen, o.q.settleSent, at, at, a.MessageID)
	default: // retry, settle as not-sent
		err = b.get(&gen, o.q.newGeneration, nullString(a.Provider), at, at, a.MessageID, string(from))
	}
	if isNoRows(err) {
		return 0, o.refusal(b, a)
	}
	if err != nil {
		return 0, fmt.Errorf("store: %s %s: %w", a.Action, a.MessageID, err)
	}
	e := a.Audit
	if e.Event == "" {
		e.Event = a.Action.AuditEvent()
	}
	if e.MessageID == "" {
		e.MessageID = a.MessageID
	}
	if e.At.IsZero() {
		e.At = a.At
	}
	if e.Outcome == "" {
		e.Outcome = fmt.Sprintf("%s->%s generation %d", from, to, gen)
	}
	if err := b.audit(e); err != nil {
		return 0, fmt.Errorf("store: %s %s: %w", a.Action, a.MessageID, err)
	}
	b.messageChanged(a.MessageID)
	return gen, nil
}

// refusal explains why a guarded transition changed nothing.
func (o *operatorOp) refusal(b *batch, a *engine.OperatorAction) error {
	var st struct {
		Dispatch     string        `db:"dispatch"`
		PayloadErase sql.NullInt64 `db:"payload_erased_at"`
	}
	err := b.get(&st, o.q.state, a.MessageID)
	if isNoRows(err) {
		return engine.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("store: %s %s: read state: %w", a.Action, a.MessageID, err)
	}
	from, _, _, _ := a.Action.Transition()
	if engine.Dispatch(st.Dispatch) == from && st.PayloadErase.Valid {
		return &engine.Problem{Code: engine.CodeMessageNotEligible,
			Detail: fmt.Sprintf("%s needs the message's payload, and retention erased it", a.Action.Verb())}
	}
	return a.Action.Refusal(engine.Dispatch(st.Dispatch))
}
