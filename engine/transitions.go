package engine

import (
	"time"

	"switchboard/packages"
)

// Transition is one allowed change of dispatch state and who makes it.
type Transition struct {
	From, To Dispatch
	By       string
}

// Transitions lists every dispatch transition. Stores apply each as a guarded update; tests
// walk this table.
func Transitions() []Transition {
	return []Transition{
		{DispatchQueued, DispatchSending, "dispatcher claim"},
		{DispatchQueued, DispatchCancelled, "cancel by submitter or operator"},
		{DispatchQueued, DispatchExpired, "expiry sweep"},
		{DispatchSending, DispatchSubmitted, "accepted outcome"},
		{DispatchSending, DispatchQueued, "transient outcome, fallback, or maybe-sent under onUncertain: retry"},
		{DispatchSending, DispatchFailed, "permanent outcome or attempts exhausted"},
		{DispatchSending, DispatchUnknown, "maybe-sent or lapsed lease under onUncertain: hold"},
		{DispatchSending, DispatchExpired, "the next attempt would fall after expiresAt"},
		{DispatchFailed, DispatchQueued, "operator retry (new generation)"},
		{DispatchUnknown, DispatchSubmitted, "operator settle --outcome sent"},
		{DispatchUnknown, DispatchQueued, "operator settle --outcome not-sent (new generation)"},
	}
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
}

// Decide applies SPEC section 6's outcome rules. jitter is a number in [0,1) for the backoff.
func Decide(m *Message, sp *packages.SenderProfile, o Outcome, now time.Time, jitter float64) Decision {
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
				d.Code = "attempts.exhausted"
			}
		}
	case OutcomePermanent:
		d.Attempt = AttemptPermanent
		if !nextProvider() {
			d.Dispatch = DispatchFailed
		}
	default: // maybe-sent, and anything unclassified is treated as maybe-sent: the safe side
		d.Attempt = AttemptMaybeSent
		if o.Class != OutcomeMaybeSent {
			d.Code = "outcome.unclassified"
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
	return d
}

// uncertainDispatch is where a maybe-sent message goes under its profile's onUncertain.
func uncertainDispatch(sp *packages.SenderProfile) Dispatch {
	if sp.OnUncertain == "retry" {
		return DispatchQueued
	}
	return DispatchUnknown
}
