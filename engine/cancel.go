package engine

import "context"

// MaySee reports whether the caller may read message m, and cancel it: its submitter (the
// caller whose pseudonym it holds) or any operator.
func (c Caller) MaySee(m *Message) bool {
	return c.Role == "operator" || m.Caller == c.Pseudonym
}

// Cancel is the API's cancel: it moves message m (as the caller read it) from queued to
// cancelled for its submitter or an operator, journaled with the caller's pseudonym, and
// returns the message as it then stands; its reason is an operator's cancel when the caller is
// an operator, Switchboard's (at the submitter's request) otherwise. The command line's cancel is Apply(ActionCancel);
// both write through the store's one cancel (ApplyOperatorActions), a guarded update that
// decides on the message as it stands in the database, not as m says.
//
// A caller who may not see m is refused with ErrNotFound. The store refuses a message whose
// dispatch started (sending, unknown) with ErrDispatchStarted, a final one with ErrTerminal, an
// absent one with ErrNotFound.
func (o *Operator) Cancel(ctx context.Context, m *Message, by Caller) (*Message, error) {
	if !by.MaySee(m) {
		return nil, ErrNotFound
	}
	oa := o.action(ActionCancel, m, by.Pseudonym, o.cfg.Clock.Now())
	oa.Reason = CancelReason(by.Role == "operator")
	after, _, err := o.write(ctx, oa)
	return after, err
}
