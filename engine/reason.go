package engine

// Reason is why a message did not end delivered or submitted (docs/api.md, "Why a message
// failed"): the code of what ended it, and who gave that code. A message that is queued,
// sending, submitted or delivered has none (the zero Reason). It holds no recipient and no
// content, so it is kept with the message's metadata, not erased with its payload.
type Reason struct {
	Code string
	By   ReasonBy
}

// None reports whether r is no reason at all.
func (r Reason) None() bool { return r.Code == "" }

// ReasonBy says who gave a reason's code.
type ReasonBy string

const (
	// ReasonByProvider: the provider's code (its adapter's send, interpret or receipt, its
	// gateway's answer, or the connection to it).
	ReasonByProvider ReasonBy = "provider"
	// ReasonBySwitchboard: one of Switchboard's own codes (OwnReasonCodes): its rules ended the
	// message, or it did what the message's submitter asked.
	ReasonBySwitchboard ReasonBy = "switchboard"
	// ReasonByOperator: an operator ended the message (a cancel).
	ReasonByOperator ReasonBy = "operator"
)

// The codes Switchboard gives a reason itself, where no provider gave one.
const (
	// CodeAttemptsExhausted: every attempt failed transiently and the last gave no code.
	CodeAttemptsExhausted = "attempts.exhausted"
	// CodeMessageExpired: the message's expiresAt passed before it could be sent.
	CodeMessageExpired = "message.expired"
	// CodeMessageCancelled: the message was cancelled before it was sent.
	CodeMessageCancelled = "message.cancelled"
	// CodeProviderRefused: the provider refused the message, or reported it undelivered,
	// without a code of its own.
	CodeProviderRefused = "provider.refused"
	// CodeProfileUnknown: the message's sender profile is no longer in the package.
	CodeProfileUnknown = "profile.unknown"
	// CodeProviderUnavailable: no provider is connected under the message's provider id.
	CodeProviderUnavailable = "provider.unavailable"
	// CodeOutcomeUnclassified: the provider answered with no outcome Switchboard knows; it is
	// treated as maybe sent.
	CodeOutcomeUnclassified = "outcome.unclassified"
	// CodeOutcomeUncertain: the message may have been sent, and the provider gave no code.
	CodeOutcomeUncertain = "outcome.uncertain"
)

// OwnReasonCodes lists the codes Switchboard gives a reason itself (docs/api.md lists each
// with its meaning).
func OwnReasonCodes() []string {
	return []string{CodeAttemptsExhausted, CodeMessageExpired, CodeMessageCancelled, CodeProviderRefused,
		CodeProfileUnknown, CodeProviderUnavailable, CodeLeaseLapsed, CodeOutcomeUnclassified, CodeOutcomeUncertain}
}

// ReasonByValues lists every value of Reason.By.
func ReasonByValues() []ReasonBy {
	return []ReasonBy{ReasonByProvider, ReasonBySwitchboard, ReasonByOperator}
}

// codeReason is the reason of an attempt's code: Switchboard's when it is one of its own
// (provider.refused names the provider's refusal, so it stays the provider's), else the
// provider's.
func codeReason(code string) Reason {
	for _, own := range OwnReasonCodes() {
		if code == own && code != CodeProviderRefused {
			return Reason{Code: code, By: ReasonBySwitchboard}
		}
	}
	return Reason{Code: code, By: ReasonByProvider}
}

// decisionReason is the reason a decided attempt leaves the message with: the attempt's code
// when it failed or left the message unknown (Switchboard's own where the provider gave
// none), message.expired when it expired, the provider's refusal when it was accepted but
// reported undelivered at once, and none otherwise (queued again, submitted).
func decisionReason(d Decision) Reason {
	switch d.Dispatch {
	case DispatchFailed:
		if d.Code == "" {
			return codeReason(CodeProviderRefused)
		}
		return codeReason(d.Code)
	case DispatchUnknown:
		if d.Code == "" {
			return codeReason(CodeOutcomeUncertain)
		}
		return codeReason(d.Code)
	case DispatchExpired:
		return codeReason(CodeMessageExpired)
	case DispatchSubmitted:
		if d.Report == ReportUndelivered {
			return codeReason(CodeProviderRefused)
		}
	}
	return Reason{}
}

// ReceiptReason is the reason a receipt's report leaves a submitted message with: the
// receipt's code (provider.refused when it gave none) by the provider for undelivered, none
// for any other report.
func ReceiptReason(report Report, code string) Reason {
	if report != ReportUndelivered {
		return Reason{}
	}
	if code == "" {
		code = CodeProviderRefused
	}
	return Reason{Code: code, By: ReasonByProvider}
}

// CancelReason is the reason of a cancel: message.cancelled, by an operator, or by Switchboard
// when it cancelled at its submitter's request.
func CancelReason(byOperator bool) Reason {
	if byOperator {
		return Reason{Code: CodeMessageCancelled, By: ReasonByOperator}
	}
	return Reason{Code: CodeMessageCancelled, By: ReasonBySwitchboard}
}

// ExpiredReason is the reason of a message the expiry sweep expired.
func ExpiredReason() Reason { return codeReason(CodeMessageExpired) }
