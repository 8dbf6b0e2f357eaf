package peer

import (
	"bytes"
	"encoding/json"
	"time"
	"unicode/utf8"

	"switchboard/engine"
)

// maxReasonBytes bounds how much of a refusing answer goes into an Outcome's Reason (logs).
const maxReasonBytes = 200

// overQuotaRetry is when a message a receiver refused as over its quota is tried again: a
// sender's per-minute allowance refills within a minute; a day's bytes take the backoff's
// doublings (docs/operations.md, "The peer channel").
const overQuotaRetry = time.Minute

// ack is the JSON acknowledgement (docs/operations.md, "The peer channel"). Accepted is a pointer so that an answer
// without the member is told apart from {"accepted": false}.
type ack struct {
	Accepted *bool  `json:"accepted"`
	InboxID  string `json:"inboxId"`
	Code     string `json:"code"`
}

// classifyAnswer turns a complete answer into an outcome: RESPONSE_GONE and
// {"accepted": true, …} are delivered, {"accepted": false, …} is refused, and any other answer
// counts as delivered (a peer that answers at all has taken the envelope). A refusal with the
// code peer.over-quota is transient: the receiver stored nothing and takes the message once the
// sender's quota has room again, so it is tried again after a minute, never failed for good.
func classifyAnswer(answer []byte) engine.Outcome {
	delivered := engine.Outcome{Class: engine.OutcomeAccepted, Report: engine.ReportDelivered}
	if string(answer) == ResponseGone {
		return delivered
	}
	trimmed := bytes.TrimSpace(answer)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return delivered
	}
	var a ack
	if err := json.Unmarshal(trimmed, &a); err != nil || a.Accepted == nil {
		return delivered
	}
	if !*a.Accepted && a.Code == CodeOverQuota {
		return engine.Outcome{Class: engine.OutcomeTransient, Code: CodeOverQuota, RetryAfter: overQuotaRetry,
			Reason: "peer is over its inbox quota for this sender: " + clip(trimmed)}
	}
	if !*a.Accepted {
		return engine.Outcome{Class: engine.OutcomePermanent, Code: CodeRefused,
			Reason: "peer refused the message: " + clip(trimmed)}
	}
	if utf8.ValidString(a.InboxID) && len(a.InboxID) <= MaxMessageIDBytes {
		delivered.ProviderReference = a.InboxID
	}
	return delivered
}

// clip returns at most maxReasonBytes of b as valid UTF-8 text.
func clip(b []byte) string {
	if len(b) > maxReasonBytes {
		b = b[:maxReasonBytes]
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}
