package engine

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Action is an operator action (docs/architecture.md, "Operate"). Each is one row of Transitions: it moves a
// message from exactly one dispatch state to one other, and is journaled with its actor.
type Action string

const (
	// ActionRetry: failed → queued, starting a new generation on the sender profile's provider.
	ActionRetry Action = "retry"
	// ActionCancel: queued (also waiting for a retry) → cancelled.
	ActionCancel Action = "cancel"
	// ActionSettleSent: unknown → submitted; the operator found out that it was sent.
	ActionSettleSent Action = "settle-sent"
	// ActionSettleNotSent: unknown → queued, starting a new generation; it was not sent.
	ActionSettleNotSent Action = "settle-not-sent"
)

// Actions lists every operator action.
func Actions() []Action {
	return []Action{ActionRetry, ActionCancel, ActionSettleSent, ActionSettleNotSent}
}

// SettleAction maps a settle outcome ("sent" or "not-sent") to its action.
func SettleAction(outcome string) (Action, error) {
	switch outcome {
	case "sent":
		return ActionSettleSent, nil
	case "not-sent":
		return ActionSettleNotSent, nil
	}
	return "", fmt.Errorf("the settle outcome must be sent or not-sent")
}

// Transition returns the dispatch state the action applies to, the one it leads to, and
// whether it starts a new generation; ok is false for an unknown action.
func (a Action) Transition() (from, to Dispatch, newGeneration, ok bool) {
	switch a {
	case ActionRetry:
		return DispatchFailed, DispatchQueued, true, true
	case ActionCancel:
		return DispatchQueued, DispatchCancelled, false, true
	case ActionSettleSent:
		return DispatchUnknown, DispatchSubmitted, false, true
	case ActionSettleNotSent:
		return DispatchUnknown, DispatchQueued, true, true
	}
	return "", "", false, false
}

// Verb is the command that names the action: retry, cancel or settle.
func (a Action) Verb() string {
	if a == ActionSettleSent || a == ActionSettleNotSent {
		return "settle"
	}
	return string(a)
}

// AuditEvent is the journal event of the action.
func (a Action) AuditEvent() string {
	switch a {
	case ActionRetry:
		return "message.retried"
	case ActionCancel:
		return "message.cancelled"
	}
	return "message.settled"
}

// OperatorAction is one action to apply to one message.
type OperatorAction struct {
	Action    Action
	MessageID string
	// Provider is the provider a new generation starts on (the sender profile's own, before
	// any fallback); "" keeps the message's current provider.
	Provider string
	// At is when the action happens: the new updated, final or next attempt time.
	At time.Time
	// Reason is what a cancel leaves the message with (CancelReason); a store fills
	// CancelReason(true), an operator's, when it is empty. The other actions clear the reason.
	Reason Reason
	// Audit is the journal record. A store fills Event (Action.AuditEvent), MessageID, At and
	// Outcome ("failed->queued generation 2") when they are empty.
	Audit AuditEntry
}

// OperatorResult is what one OperatorAction did: the transition and the generation the message
// is in afterwards, or why it was refused (ErrNotFound, or Action.Refusal of the state found).
type OperatorResult struct {
	MessageID  string
	From, To   Dispatch
	Generation int
	Err        error
}

// MaxOperatorBatch bounds the actions of one ApplyOperatorActions call (one transaction).
const MaxOperatorBatch = 1000

// Change is what an action does, or would do, to one message.
type Change struct {
	Action     Action
	MessageID  string
	From, To   Dispatch
	Generation int // the generation after the change
	// PastExpiry is set when a new generation starts after the message's expiresAt: it will
	// expire instead of being sent.
	PastExpiry bool
}

// String is the line an operator reads: "cancel ID: queued -> cancelled", with the new
// generation for a retry or a settle as not-sent.
func (c Change) String() string {
	s := fmt.Sprintf("%s %s: %s -> %s", c.Action.Verb(), c.MessageID, c.From, c.To)
	if _, _, gen, _ := c.Action.Transition(); gen {
		s += fmt.Sprintf(" (generation %d", c.Generation)
		if c.PastExpiry {
			s += "; past its expiresAt: it will expire, not be sent"
		}
		s += ")"
	}
	return s
}

// Eligible checks whether action a applies to m at now, without changing anything. It returns
// the change it would make, or a Problem with code message.not-eligible whose detail names the
// state the message is in (never a submitted value).
func Eligible(a Action, m *Message, now time.Time) (Change, error) {
	from, to, gen, ok := a.Transition()
	if !ok {
		return Change{}, fmt.Errorf("engine: unknown operator action %q", a)
	}
	if m.Dispatch != from {
		return Change{}, notEligible(a, from, m.Dispatch)
	}
	c := Change{Action: a, MessageID: m.ID, From: from, To: to, Generation: m.Generation}
	if gen {
		if m.PayloadErasedAt != nil {
			return Change{}, &Problem{Code: CodeMessageNotEligible,
				Detail: fmt.Sprintf("%s needs the message's payload, and retention erased it", a.Verb())}
		}
		c.Generation++
		c.PastExpiry = !now.Before(m.ExpiresAt)
	}
	return c, nil
}

// notEligible is the refusal of action a on a message in state d.
func notEligible(a Action, from, d Dispatch) error {
	return &Problem{Code: CodeMessageNotEligible,
		Detail: fmt.Sprintf("%s applies to %s messages; this message is %s", a.Verb(), from, d)}
}

// Refusal is why a store's guarded update of action a changed nothing on a message it found in
// dispatch state d. A cancel answers as the API's cancel always has: ErrDispatchStarted once
// dispatch started (sending, unknown), ErrTerminal when the message is final. The other actions
// answer a message.not-eligible Problem naming d, as Eligible does.
func (a Action) Refusal(d Dispatch) error {
	if a == ActionCancel {
		switch {
		case d.Final():
			return ErrTerminal
		case d == DispatchSending || d == DispatchUnknown:
			return ErrDispatchStarted
		}
	}
	from, _, _, _ := a.Transition()
	return notEligible(a, from, d)
}

// skippable reports whether err is the refusal of one message of a bulk action (it is absent,
// or no longer in the action's from-state), which the action skips.
func skippable(err error) bool {
	for _, target := range []error{ErrNotEligible, ErrNotFound, ErrDispatchStarted, ErrTerminal} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// Statuses lists every caller-visible status: the dispatch states, then every other word
// Status derives from a (dispatch, report) pair (delivered).
func Statuses() []string {
	out := make([]string, 0, len(DispatchStates())+1)
	for _, d := range DispatchStates() {
		out = append(out, string(d))
	}
	for _, d := range DispatchStates() {
		for _, r := range ReportStates() {
			if s := Status(d, r); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// MessageOrder is the order of a listing.
type MessageOrder int

const (
	// NewestFirst orders by acceptance time, newest first, then by id, newest first. Its cursor
	// (MessagePage.Next) continues after the last message of a page: a message accepted while
	// a reader pages through sorts before the first page and is never met on a later one.
	NewestFirst MessageOrder = iota
	// ScanOrder is the store's own stable order, with a cursor: each message appears once
	// however the listed messages change between pages. Bulk actions walk it.
	ScanOrder
)

// MessageQuery selects messages by their metadata. Zero members do not filter.
type MessageQuery struct {
	Status         string    // a caller-visible status (Statuses)
	Dispatch       Dispatch  // a dispatch state
	SenderProfile  string    // the message's sender profile
	Channel        Channel   // the message's channel
	Caller         string    // the submitter's pseudonym (Message.Caller): a sender's own messages
	AcceptedAfter  time.Time // accepted at or after
	AcceptedBefore time.Time // accepted strictly before
	PayloadKept    bool      // only messages whose payload was not erased
	// WithAttempts also reads each listed message's attempts, as Message does (one more
	// statement for the page).
	WithAttempts bool
	Order        MessageOrder
	After        string // cursor: MessagePage.Next of the previous page in the same Order
	Limit        int    // at most this many; 1 to MaxListLimit
}

// MaxListLimit bounds one listing page.
const MaxListLimit = 1000

// MessagePage is one page of a listing.
type MessagePage struct {
	Messages []Message
	Next     string // cursor of the next page; "" after the last
}

// ErrInvalidCursor is returned (wrapped) by a listing given a cursor its store did not make.
var ErrInvalidCursor = NewProblem(CodeRequestInvalid, "the cursor is not one this listing made")
