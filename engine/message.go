package engine

import "time"

// Channel is what a message is.
type Channel string

// The channels a message may be (docs/api.md).
const (
	ChannelEmail Channel = "email"
	ChannelSMS   Channel = "sms"
	ChannelPeer  Channel = "peer"
	// ChannelChat is a message to a chat gateway's own address (a Slack channel id, a Telegram
	// chat id, a Teams conversation), carried by http providers only.
	ChannelChat Channel = "chat"
	// ChannelPush is a notification to an app on one device, by its gateway's registration
	// token (Firebase Cloud Messaging, Apple Push Notification service), carried by http
	// providers only.
	ChannelPush Channel = "push"
)

// Dispatch is what Switchboard did with a message. Every transition between dispatch states
// is listed in transitions.go; a store applies each one as a guarded update.
type Dispatch string

const (
	// DispatchQueued: accepted and waiting to be claimed, either for the first attempt or for a
	// retry after a transient failure. Submission, an operator retry and a settle as not-sent move
	// a message here; a claim moves it to sending, cancel to cancelled, the expiry sweep to expired.
	DispatchQueued Dispatch = "queued"
	// DispatchSending: claimed by a worker under a lease. Only the lease holder's outcome, or the
	// recovery of a lapsed lease, moves it out.
	DispatchSending Dispatch = "sending"
	// DispatchSubmitted: the provider accepted the message. Final for dispatch; the report may
	// still move forward.
	DispatchSubmitted Dispatch = "submitted"
	// DispatchFailed: the provider refused it, or every attempt and fallback failed. An operator
	// retry moves it back to queued with a new generation.
	DispatchFailed Dispatch = "failed"
	// DispatchUnknown: it may have been sent (a maybe-sent outcome under onUncertain: hold).
	// Nothing more is sent until an operator settles it as sent (submitted) or not-sent (queued).
	DispatchUnknown Dispatch = "unknown"
	// DispatchCancelled: cancelled by its submitter or an operator before it was sent. Final.
	DispatchCancelled Dispatch = "cancelled"
	// DispatchExpired: its expiresAt passed before it could be sent. Final; never sent.
	DispatchExpired Dispatch = "expired"
)

// DispatchStates lists every dispatch state, in lifecycle order.
func DispatchStates() []Dispatch {
	return []Dispatch{DispatchQueued, DispatchSending, DispatchSubmitted, DispatchFailed,
		DispatchUnknown, DispatchCancelled, DispatchExpired}
}

// Final reports whether no dispatch will ever happen again without an operator.
func (d Dispatch) Final() bool {
	switch d {
	case DispatchSubmitted, DispatchFailed, DispatchCancelled, DispatchExpired:
		return true
	}
	return false
}

// Report is what the provider said after it accepted a message. It only moves forward:
// none → sent → delivered | undelivered. Providers that never report read unavailable.
type Report string

const (
	// ReportNone: nothing reported yet.
	ReportNone Report = "none"
	// ReportSent: the provider says it passed the message on.
	ReportSent Report = "sent"
	// ReportDelivered: the provider says the recipient got it (a peer's acknowledgement counts).
	ReportDelivered Report = "delivered"
	// ReportUndelivered: the provider says it could not deliver it.
	ReportUndelivered Report = "undelivered"
	// ReportUnavailable: the provider never reports (SMTP, HTTP providers without receipts).
	ReportUnavailable Report = "unavailable"
)

// ReportStates lists every report state.
func ReportStates() []Report {
	return []Report{ReportNone, ReportSent, ReportDelivered, ReportUndelivered, ReportUnavailable}
}

// rank orders reports so that a receipt can only move a report forward.
func (r Report) rank() int {
	switch r {
	case ReportSent:
		return 1
	case ReportDelivered, ReportUndelivered:
		return 2
	}
	return 0
}

// Advances reports whether moving from r to next is a step forward. Duplicate, late and
// out-of-order receipts fail this test and leave the report as it is.
func (r Report) Advances(next Report) bool {
	if r == ReportUnavailable || next == ReportNone || next == ReportUnavailable {
		return false
	}
	return next.rank() > r.rank()
}

// ReportStep is one forward move of a report.
type ReportStep struct{ From, To Report }

// ReportSteps lists every move a report may make: the pairs Advances holds for. A store
// applies each as a guarded update (the report changes only while it is in From).
func ReportSteps() []ReportStep {
	var out []ReportStep
	for _, from := range ReportStates() {
		for _, to := range ReportStates() {
			if from.Advances(to) {
				out = append(out, ReportStep{From: from, To: to})
			}
		}
	}
	return out
}

// ReportsBefore lists the reports from which to is a step forward; none for a report that no
// step leads to (none, unavailable).
func ReportsBefore(to Report) []Report {
	var out []Report
	for _, s := range ReportSteps() {
		if s.To == to {
			out = append(out, s.From)
		}
	}
	return out
}

// Status is the one word a caller reads: the dispatch, except that submitted+delivered reads
// delivered and submitted+undelivered reads failed. It is the only derivation of a status:
// stores build their status filters from it (see Statuses).
func Status(d Dispatch, r Report) string {
	if d == DispatchSubmitted {
		switch r {
		case ReportDelivered:
			return "delivered"
		case ReportUndelivered:
			return string(DispatchFailed)
		}
	}
	return string(d)
}

// Message is the metadata of one accepted message: everything but its rendered payload and
// recipient address, which a store keeps apart so listings never load them.
type Message struct {
	ID               string
	Dispatch         Dispatch
	Report           Report
	ReportedAt       *time.Time
	Channel          Channel
	SenderProfile    string
	Provider         string // the provider of the current or last attempt
	ProviderRef      string // the provider reference of the accepted attempt, for receipts
	RecipientKind    string // "email", "phone", "peer", "address" (chat) or "device" (push)
	TemplateID       string
	TemplateVersion  string
	Locale           string
	CorrelationID    string
	AccessProfile    string
	Caller           string // the caller's pseudonym (issuer, sub): who may read and cancel it
	AcceptedAt       time.Time
	NotBefore        *time.Time
	ExpiresAt        time.Time
	UpdatedAt        time.Time
	NextAttemptAt    time.Time
	Generation       int
	Attempt          int // ordinal of the latest attempt in this generation (0 before the first)
	ProviderAttempts int // attempts so far in this generation on the current provider (for backoff)
	FallbackIndex    int // 0 = the profile's provider, i = fallbackProviders[i-1]
	PayloadBytes     int64
	FinalAt          *time.Time
	PayloadErasedAt  *time.Time
	Attempts         []Attempt // filled by Store.Message, not by listings
	DispatchCode     string    // the code of the failure that made it failed, if any
	// Reason is why it did not end delivered or submitted (failed, unknown, cancelled,
	// expired); none otherwise.
	Reason           Reason
	IdempotencyKey   string // provider idempotency key of this generation, when idempotentSubmit
	LastOutcomeClass OutcomeClass
	// Sequence counts the changes of the message's status, dispatch or report (acceptance is
	// the first): the sequence of its message.status events.
	Sequence int64
}

// Status derives the caller-visible status.
func (m *Message) Status() string { return Status(m.Dispatch, m.Report) }

// AttemptOutcome is the recorded result of one attempt.
type AttemptOutcome string

// Attempt outcomes. in-progress is written at claim time; interrupted when a lease lapsed
// mid-send and the process that held it is gone.
const (
	AttemptInProgress AttemptOutcome = "in-progress"
	AttemptAccepted   AttemptOutcome = "accepted"
	AttemptTransient  AttemptOutcome = "transient"
	AttemptPermanent  AttemptOutcome = "permanent"
	AttemptMaybeSent  AttemptOutcome = "maybe-sent"
	AttemptExpired    AttemptOutcome = "expired"
	AttemptInterrupt  AttemptOutcome = "interrupted"
)

// Attempt is one try to hand a message to a provider.
type Attempt struct {
	Generation  int
	Attempt     int
	Provider    string
	Outcome     AttemptOutcome
	StartedAt   time.Time
	FinishedAt  *time.Time
	Code        string
	ProviderRef string
}
