package engine

import (
	"time"

	"switchboard/packages"
)

// Transition is one allowed change of dispatch state: who makes it, which engine code decides
// it, and which Store method applies it as a guarded update (one that changes the message only
// while it is in From, so two writers can never both move it).
type Transition struct {
	From, To Dispatch
	By       string     // what happens, in an operator's words
	Decider  string     // the engine code that decides it
	Write    StoreWrite // the Store method that applies it
}

// StoreWrite names the Store method that applies a transition.
type StoreWrite string

// The Store methods that change a message's dispatch state.
const (
	WriteClaimPage      StoreWrite = "ClaimPage"
	WriteExpireDue      StoreWrite = "ExpireDue"
	WriteFinish         StoreWrite = "Finish"
	WriteOperatorAction StoreWrite = "ApplyOperatorActions"
)

// Transitions lists every dispatch transition; nothing else moves a message between dispatch
// states. Stores apply each as a guarded update and refuse every move the table does not list;
// the engine's tests, the store conformance suite (store/storetest) and the state diagram of
// docs/architecture.md are all generated from or checked against this table.
func Transitions() []Transition {
	return []Transition{
		{DispatchQueued, DispatchSending, "dispatcher claim", "Dispatcher (claim loop, DispatchDue)", WriteClaimPage},
		{DispatchQueued, DispatchCancelled, "cancel by submitter or operator",
			"Operator.Cancel (API), Operator.Apply and ApplyBulk (command line)", WriteOperatorAction},
		{DispatchQueued, DispatchExpired, "expiry sweep", "Dispatcher maintenance pass", WriteExpireDue},
		{DispatchSending, DispatchSubmitted, "accepted outcome", "Decide", WriteFinish},
		{DispatchSending, DispatchQueued, "transient outcome, fallback, or maybe-sent or lapsed lease under onUncertain: retry",
			"Decide, DecideLapsed", WriteFinish},
		{DispatchSending, DispatchFailed, "permanent outcome, attempts exhausted, or sender profile gone", "Decide", WriteFinish},
		{DispatchSending, DispatchUnknown, "maybe-sent or lapsed lease under onUncertain: hold (or retry with attempts exhausted)",
			"Decide, DecideLapsed", WriteFinish},
		{DispatchSending, DispatchExpired, "claimed after expiresAt, or the next attempt would fall after it",
			"DecideExpired, Decide, DecideLapsed", WriteFinish},
		{DispatchFailed, DispatchQueued, "operator retry (new generation)", "Operator.Apply and ApplyBulk", WriteOperatorAction},
		{DispatchUnknown, DispatchSubmitted, "operator settle --outcome sent", "Operator.Apply and ApplyBulk", WriteOperatorAction},
		{DispatchUnknown, DispatchQueued, "operator settle --outcome not-sent (new generation)",
			"Operator.Apply and ApplyBulk", WriteOperatorAction},
	}
}

// Allowed reports whether Transitions lists a move from one dispatch state to another.
func Allowed(from, to Dispatch) bool {
	for _, t := range Transitions() {
		if t.From == from && t.To == to {
			return true
		}
	}
	return false
}

// Decision is the pure part of finishing an attempt: given the message as claimed, its sender
// profile and the provider's outcome, what the message becomes.
type Decision struct {
	Attempt          AttemptOutcome
	Dispatch         Dispatch
	Report           Report
	NextAttemptAt    time.Time
	ProviderAttempts int
	FallbackIndex    int
	Provider         string
	Code             string
	// Reason is what the message is left with (none unless it failed, is unknown or expired).
	Reason Reason
	// DeviceUnregistered: the attempt failed for good because the gateway said the device
	// token is no longer valid (Outcome.DeviceUnregistered on a permanent outcome).
	DeviceUnregistered bool
}

// Decide applies the outcome rules of docs/architecture.md ("Message lifecycle") to a message
// in sending. jitter is a number in [0,1) for the backoff. A nil sp (the package no longer has
// the message's sender profile) decides as a profile of the message's provider alone, without
// retries, under onUncertain: hold.
func Decide(m *Message, sp *packages.SenderProfile, o Outcome, now time.Time, jitter float64) Decision {
	if sp == nil {
		sp = &packages.SenderProfile{ID: m.SenderProfile, Provider: m.Provider, OnUncertain: "hold"}
	}
	d := Decision{
		Report: m.Report, NextAttemptAt: m.NextAttemptAt, ProviderAttempts: m.ProviderAttempts + 1,
		FallbackIndex: m.FallbackIndex, Provider: m.Provider, Code: o.Code,
	}
	chain := append([]string{sp.Provider}, sp.FallbackProviders...)
	nextProvider := func() bool {
		if d.FallbackIndex+1 >= len(chain) {
			return false
		}
		d.FallbackIndex++
		d.Provider = chain[d.FallbackIndex]
		d.ProviderAttempts = 0
		d.Dispatch = DispatchQueued
		d.NextAttemptAt = now
		return true
	}
	retryLater := func() {
		d.Dispatch = DispatchQueued
		d.NextAttemptAt = now.Add(Backoff(sp.Retry, d.ProviderAttempts, o.RetryAfter, jitter))
		if !d.NextAttemptAt.Before(m.ExpiresAt) {
			d.Dispatch = DispatchExpired
		}
	}
	exhausted := d.ProviderAttempts >= sp.Retry.MaximumAttempts
	switch o.Class {
	case OutcomeAccepted:
		d.Attempt, d.Dispatch = AttemptAccepted, DispatchSubmitted
		if o.Report != "" && o.Report != ReportNone && (d.Report == ReportNone || d.Report.Advances(o.Report)) {
			d.Report = o.Report
		}
		d.Code = ""
	case OutcomeTransient:
		d.Attempt = AttemptTransient
		switch {
		case !exhausted:
			retryLater()
		case nextProvider():
		default:
			d.Dispatch = DispatchFailed
			if d.Code == "" {
				d.Code = CodeAttemptsExhausted
			}
		}
	case OutcomePermanent:
		d.Attempt = AttemptPermanent
		d.DeviceUnregistered = o.DeviceUnregistered
		if !nextProvider() {
			d.Dispatch = DispatchFailed
		}
	default: // maybe-sent, and anything unclassified is treated as maybe-sent: the safe side
		d.Attempt = AttemptMaybeSent
		if o.Class != OutcomeMaybeSent {
			d.Code = CodeOutcomeUnclassified
		}
		d.Dispatch = uncertainDispatch(sp)
		if d.Dispatch == DispatchQueued {
			if exhausted {
				d.Dispatch = DispatchUnknown
			} else {
				retryLater()
			}
		}
	}
	d.Reason = decisionReason(d)
	return d
}

// CodeLeaseLapsed is the code of an attempt whose lease lapsed mid-send.
const CodeLeaseLapsed = "lease.lapsed"

// DecideLapsed decides for a message whose lease lapsed mid-send (its process is gone or
// stalled): it may have been sent, so it is a maybe-sent outcome, and onUncertain, the attempt
// count and the expiry rule apply exactly as Decide applies them to a live one. The attempt
// closes as interrupted.
func DecideLapsed(m *Message, sp *packages.SenderProfile, now time.Time, jitter float64) Decision {
	d := Decide(m, sp, Outcome{Class: OutcomeMaybeSent, Code: CodeLeaseLapsed}, now, jitter)
	d.Attempt = AttemptInterrupt
	return d
}

// DecideExpired decides for a claimed message whose expiresAt has passed: it expires and is
// never sent; its counters and provider stay as they are.
func DecideExpired(m *Message) Decision {
	return Decision{Attempt: AttemptExpired, Dispatch: DispatchExpired, Report: m.Report,
		NextAttemptAt: m.NextAttemptAt, ProviderAttempts: m.ProviderAttempts, FallbackIndex: m.FallbackIndex,
		Provider: m.Provider, Code: CodeMessageExpired, Reason: codeReason(CodeMessageExpired)}
}

// uncertainDispatch is where a maybe-sent message goes under its profile's onUncertain.
func uncertainDispatch(sp *packages.SenderProfile) Dispatch {
	if sp.OnUncertain == "retry" {
		return DispatchQueued
	}
	return DispatchUnknown
}
