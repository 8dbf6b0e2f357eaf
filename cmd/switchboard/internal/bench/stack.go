package bench

import (
	"context"
	"log/slog"
	"time"

	"switchboard/engine/auth"
	"switchboard/engine/webhooks/receiver"
	"switchboard/packages"
	"switchboard/providers/httpgw/mockgw"
	"switchboard/providers/smtp/smtpsink"
	"switchboard/store"
)

// StartStack is the seam between the bench and the command: it wires the system under test on
// the package folder spec.Dir exactly as `switchboard dev` wires its own (the dev folder and its
// keys, the stand-ins, the runtime file) and runs the stack in spec.Instances `serve` processes
// of their own, so that their CPU time can be told from the bench's, and returns it serving.
// The bench measures whatever it is handed; it never builds the stack itself.
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
	// Database is a PostgreSQL URL to run the stack on (in a fresh schema), or "" for SQLite
	// in Dir; Instances is how many serve processes share it.
	Database  string
	Instances int
	// CPUProfile, when set, is where the first serve process writes a CPU profile of its run.
	CPUProfile string
	// Admission is the serve processes' admission policy, AdmissionGiveWay or AdmissionOff.
	Admission string
	// PeerPooled turns the pooled peer transport on at both ends; PeerRelay puts the
	// companion peer behind a circuit relay, reachable only through it.
	PeerPooled, PeerRelay bool
	// Log is the stack's logger, StandInLog the stand-ins'.
	Log, StandInLog *slog.Logger
}

// Stack is the system under test as the command wired it. The bench reads the stand-ins'
// counters to tell a message lost or duplicated, the serve processes' CPU time and metrics, and
// the database's queue figures to report how the stack did.
type Stack struct {
	// APIURL is the first instance's API base URL, "http://127.0.0.1:PORT"; APIs lists every
	// instance's API address (host:port). Callers spread over them.
	APIURL string
	APIs   []string
	// Package is the package the stack serves.
	Package *packages.Package
	// Issuer signs the callers' access tokens; the stack trusts it.
	Issuer *auth.DevIssuer
	// Processes are the serve processes' ids: the CPU time they spend during a run is the
	// Switchboard CPU the bench charges to its messages.
	Processes []int
	// Store is the bench's own handle on the run's database, for the queue figures it polls
	// (read through the API, the polling would be charged to the instances).
	Store *store.Store
	// Metric sums an unlabelled metric of every instance's /metrics.
	Metric func(ctx context.Context, name string) (float64, error)
	// Histogram sums the buckets of a histogram over every label and instance.
	Histogram func(ctx context.Context, name string) ([]Bucket, error)
	// Database is the PostgreSQL server of a run on PostgreSQL, nil on SQLite.
	Database *DatabaseServer
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
	// Stopped delivers the end of a serve process that stopped by itself (nil for a graceful
	// stop), then is closed.
	Stopped <-chan error
	// Close stops the serve processes gracefully, waits for them, then stops the stand-ins and
	// drops what the run left in the database.
	Close func()
}

// DatabaseServer is what the bench needs to charge a PostgreSQL server's CPU time to a run.
type DatabaseServer struct {
	// AnyBackend is the process id of a backend of the server (serving one of the command's own
	// connections): when the server runs on this machine, its parent is the server's main
	// process, whose children are the server's processes. 0 when unknown.
	AnyBackend int
	// Foreign lists the server's client backends that do not work for the run (other clients of
	// a shared server, the bench's own reads): their CPU time is not the run's.
	Foreign func(ctx context.Context) (map[int]bool, error)
}
