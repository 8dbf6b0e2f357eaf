package bench

import (
	"context"
	"log/slog"
	"time"

	"switchboard/engine"
	"switchboard/engine/auth"
	"switchboard/engine/webhooks/receiver"
	"switchboard/packages"
	"switchboard/providers/httpgw/mockgw"
	"switchboard/providers/smtp/smtpsink"
	"switchboard/store"
)

// StartStack is the seam between the bench and the command: it wires the system under test on
// the package folder spec.Dir exactly as `switchboard dev` wires its own (the dev folder and its
// keys, the stand-ins, the runtime file, the stack served on a loopback listener) and returns
// it serving. The bench measures whatever it is handed; it never builds the stack itself.
type StartStack func(ctx context.Context, spec StackSpec) (*Stack, error)

// StackSpec is what a run asks of the stack it measures.
type StackSpec struct {
	// Dir is a copy of the package: the stack may write its state under Dir/.switchboard.
	Dir string
	// GatewayLatency is how long each mock gateway takes to answer a send, ReceiptDelay how long
	// after it posts the signed receipt, and ReceiptWorkers how many receipts it posts at once.
	GatewayLatency, ReceiptDelay time.Duration
	ReceiptWorkers               int
	// Webhooks asks for a local event receiver subscribed to message.status (Stack.Events).
	Webhooks bool
	// Tune adjusts the runtime file at runtimePath after the command wrote it and before the
	// stack loads it: the bench sets its own dispatch.concurrency.
	Tune func(runtimePath string) error
	// Log is the stack's logger, StandInLog the stand-ins'.
	Log, StandInLog *slog.Logger
}

// Stack is the system under test as the command wired it. The bench reads the stand-ins'
// counters to tell a message lost or duplicated, and the store's and dispatcher's figures to
// report how the stack did.
type Stack struct {
	// APIURL is the API's base URL, "http://127.0.0.1:PORT".
	APIURL string
	// Package is the package the stack serves.
	Package *packages.Package
	// Issuer signs the callers' access tokens; the stack trusts it.
	Issuer     *auth.DevIssuer
	Store      *store.Store
	Dispatcher *engine.Dispatcher
	// Gateways are the mock gateways of the package's http providers.
	Gateways []*mockgw.Gateway
	// Sink is the SMTP sink, nil when no provider sends mail.
	Sink *smtpsink.Sink
	// CompanionID is the companion peer's id and CompanionInbox what it received; both are
	// zero when no provider is a peer.
	CompanionID    string
	CompanionInbox *store.Store
	// Events is the event receiver of a run with Webhooks, EventEndpoint the id of the endpoint
	// the runtime file subscribes it as; nil and "" otherwise. Close stops it.
	Events        *receiver.Receiver
	EventEndpoint string
	// Stopped delivers the stack's end (nil for a graceful stop), then is closed.
	Stopped <-chan error
	// Close stops the stack gracefully, waits for it, then stops the stand-ins.
	Close func()
}
