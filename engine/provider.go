package engine

import (
	"context"
	"net/http"
	"time"
)

// Provider is one connected transport (an http gateway, an SMTP relay, a libp2p host).
// A provider never writes state: it returns an Outcome and the engine records it.
type Provider interface {
	// Kind is "http", "smtp" or "peer".
	Kind() string
	// Send hands one message to the transport and classifies what happened. Send must return
	// a transient outcome when ctx ends before the request is written, and maybe-sent when it
	// ends after the request left but before a complete answer arrived.
	Send(ctx context.Context, out *Outbound) Outcome
	// Close releases connections and listeners. It is safe to call more than once.
	Close() error
}

// Outbound is everything a provider needs to send one message.
type Outbound struct {
	MessageID      string
	Generation     int
	Attempt        int
	Channel        Channel
	Recipient      string            // the address: email address, E.164 number, peer id, chat address or device token
	Parts          map[string]string // rendered parts by name: subject, text, html, body
	ContentType    string            // peer body content type
	SenderProfile  SenderProfileView
	IdempotencyKey string // empty unless the provider is idempotentSubmit; stable per generation
	Deadline       time.Time
}

// SenderProfileView is what a provider (and an adapter script) may know of the sender profile.
type SenderProfileView struct {
	ID              string
	Channel         Channel
	Sender          string
	MaximumSegments int
}

// OutcomeClass classifies an attempt.
type OutcomeClass string

// The outcome classes (docs/architecture.md, "Outcome rules").
const (
	// OutcomeAccepted: the provider took the message.
	OutcomeAccepted OutcomeClass = "accepted"
	// OutcomeTransient: definitely not sent; try again later.
	OutcomeTransient OutcomeClass = "transient"
	// OutcomePermanent: definitely not sent and never will be; Code says why.
	OutcomePermanent OutcomeClass = "permanent"
	// OutcomeMaybeSent: the request left but no complete answer came back.
	OutcomeMaybeSent OutcomeClass = "maybe-sent"
)

// Outcome is a provider's classification of one attempt.
type Outcome struct {
	Class             OutcomeClass
	ProviderReference string
	// Report is what is already known at send time: delivered for a peer acknowledgement,
	// unavailable for SMTP and providers without receipts, none when receipts will come.
	Report     Report
	RetryAfter time.Duration
	// Code is stable and shown to operators (for example "http.400", "smtp.550").
	Code string
	// Reason is internal detail for logs; never shown to callers.
	Reason string
	// DeviceUnregistered says the gateway refused the recipient because its device token is no
	// longer valid (the app was uninstalled, the token expired or was never the gateway's). On
	// a permanent outcome the message's failure is reported to the application as a
	// device.unregistered event (docs/webhooks.md).
	DeviceUnregistered bool
}

// Receipt is one delivery report parsed from a provider callback.
type Receipt struct {
	ProviderReference string
	Report            Report
	Code              string
}

// ReceiptHandler is implemented by providers that accept signed delivery reports. The API
// routes POST /v1/provider-callbacks/{provider}[/{token}] to it.
type ReceiptHandler interface {
	// VerifyCallback checks the request's signature over the raw body. It returns
	// ErrCallbackUnverified when the request is not proven to come from the provider.
	VerifyCallback(r *http.Request, token string, body []byte) error
	// ParseReceipts runs the adapter's receipt function over a verified request. A nil slice with
	// a nil error means the callback is to be ignored. A script failure returns an error wrapping
	// ErrCallbackUnreadable.
	ParseReceipts(ctx context.Context, r *http.Request, body []byte) ([]Receipt, error)
}

// Callback is what one verified callback carried: delivery reports, inbound messages, or both.
type Callback struct {
	Receipts []Receipt
	Inbound  []InboundItem
}

// CallbackHandler is implemented by ReceiptHandlers whose callbacks may also carry inbound
// messages (docs/adapters.md). The API calls ParseCallback instead of ParseReceipts.
type CallbackHandler interface {
	ReceiptHandler
	// ParseCallback runs the adapter's callback function (or its receipt function, for receipts
	// only) over a verified request. An empty Callback with a nil error means the request is
	// to be ignored. A script failure or an invalid item returns an error wrapping
	// ErrCallbackUnreadable.
	ParseCallback(ctx context.Context, r *http.Request, body []byte) (Callback, error)
	// InboundChannel is the channel of the inbound messages this provider receives.
	InboundChannel() Channel
}

// Starter is implemented by providers that run listeners or background work while serve runs.
type Starter interface {
	Start(ctx context.Context) error
}

// PeerEvents lets a provider tell the engine that a peer connected, so that the peer's queued
// messages become due at once.
type PeerEvents interface {
	PeerConnected(ctx context.Context, peerID string)
}
