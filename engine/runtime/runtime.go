package runtime

import (
	"net/netip"
	"net/url"
	"time"
)

// APIVersion and Kind are the envelope every runtime file must carry.
const (
	APIVersion = "switchboard/v1"
	Kind       = "Runtime"
)

// Defaults of the runtime file (docs/runtime.md).
const (
	DefaultAPIListen     = "127.0.0.1:8107"
	DefaultMetricsListen = "127.0.0.1:9107"
	DefaultScopeClaim    = "scope"
	DefaultClientClaim   = "client_id"
	DefaultPeerProtocol  = "/switchboard/1.0.0/message"
	// DefaultInboxMessagesPerMinute and DefaultInboxBytesPerDay are a peer provider's
	// inboxQuota when the file gives none.
	DefaultInboxMessagesPerMinute = 600
	DefaultInboxBytesPerDay       = 100 << 20
	// DefaultKeepaliveSeconds, DefaultIdleCloseSeconds and DefaultRequestTimeoutSeconds time a
	// peer provider's pooled streams when the file does not.
	DefaultKeepaliveSeconds      = 10
	DefaultIdleCloseSeconds      = 300
	DefaultRequestTimeoutSeconds = 20
	// DefaultRelayCircuitSeconds and DefaultRelayCircuitBytes are the limits of one circuit
	// of a peer provider's relay service: 30 minutes and a hundred 10 MiB envelopes.
	DefaultRelayCircuitSeconds = 30 * 60
	DefaultRelayCircuitBytes   = 100 * (10 << 20)
)

// Runtime is a loaded, validated runtime file with every secret resolved. Every path in it is
// absolute. It is immutable after Load: callers read it and pass parts of it to constructors.
type Runtime struct {
	// Path is the absolute path of the runtime file; Dir its folder, against which every
	// relative path of the file was resolved.
	Path, Dir string
	Package   PackageRef
	Listen    Listen
	// PublicURL is the externally reachable base URL of the API listener (member publicUrl,
	// optional; always ending with "/"): CallbackURL builds each provider's callback URL from
	// it. nil when the file has none.
	PublicURL *url.URL
	Database  Database
	// Authentication configures the bearer-token checks (docs/api.md, "Authentication").
	Authentication Authentication
	// Providers holds the connection of each provider, by provider id.
	Providers map[string]*ProviderConfig
	Dispatch  Dispatch
	Audit     Audit
	Retention Retention
	Sandbox   Sandbox
	// Console is the operator console (member `console`); off unless enabled.
	Console Console
	// Webhooks are the endpoints that receive events, in file order (docs/webhooks.md).
	Webhooks []Webhook

	lines map[string]int // member -> line in Path, for CheckPackage's diagnostics
}

// PackageRef says which package the runtime serves.
type PackageRef struct {
	// Root is the absolute path of the package folder; Load checks it is a folder.
	Root string
	// ExpectedDigest pins the package digest ("sha256:" and 64 lower-case hex); "" = no pin.
	ExpectedDigest string
}

// Listen holds the listener addresses (host:port). Port 0 asks the system for a free port.
type Listen struct {
	// API is the HTTP API listener; default 127.0.0.1:8107.
	API string
	// Metrics is the Prometheus listener; default 127.0.0.1:9107. An explicit empty string
	// (`metrics: ""`) turns the metrics listener off. It never equals API.
	Metrics string
	// TLS, when set, makes the API listener serve HTTPS (member `tls`); nil = plain HTTP.
	TLS *TLS
	// TrustedProxies are the peers whose X-Forwarded-For, X-Forwarded-Host and
	// X-Forwarded-Proto the API believes (member `trustedProxies`); empty = none.
	TrustedProxies []netip.Prefix
}

// TLS is the certificate the API listener serves (member `listen.tls`). Load checked that the
// files exist and make a pair; serve reads them again whenever they change.
type TLS struct {
	// CertFile is the absolute path of the PEM certificate chain, the leaf first.
	CertFile string
	// KeyFile is the absolute path of the PEM private key of the leaf.
	KeyFile string
}

// Database says where state lives.
type Database struct {
	// Driver is "sqlite" or "postgres".
	Driver string
	// Path is the absolute path of the SQLite database file (sqlite only).
	Path string
	// URL is the PostgreSQL connection string, read from urlRef (postgres only).
	URL Secret
	// Synchronous is the SQLite synchronous pragma: "NORMAL" (default) or "FULL" (member
	// `synchronous: normal|full`, sqlite only).
	Synchronous string
}

// Authentication configures access-token checks.
type Authentication struct {
	OIDC OIDC
	// ScopeClaim names the claim holding scopes (a space-separated string or an array);
	// default "scope".
	ScopeClaim string
	// ClientClaim names the claim holding the OAuth client id; default "client_id" (RFC 9068).
	ClientClaim string
}

// OIDC is the token issuer the API trusts. Exactly one of JWKSURI and JWKSFile is set.
type OIDC struct {
	Issuer   string
	Audience string
	// JWKSURI is https, or http to a loopback host.
	JWKSURI string
	// JWKSFile is the absolute path of a JWKS document on disk.
	JWKSFile string
	// AllowedClients lists the OAuth client ids whose tokens are accepted; never empty.
	AllowedClients []string
	// TokenTypes lists the token types accepted, in canonical form (auth.ParseTokenType);
	// nil means the verifier's default, at+jwt only.
	TokenTypes []string
}

// Dispatch bounds the dispatcher (docs/runtime.md, "dispatch"). Every value is a positive integer.
type Dispatch struct {
	Concurrency              int   // workers sending at once, per provider lane; default DefaultConcurrency
	BatchSize                int   // entries per claimed page; default 100
	MaxPayloadBytes          int64 // rendered payload bytes per claimed page; default 10485760
	PollIntervalMilliseconds int   // wait between polls when nothing is due; default 1000
	// LeaseSeconds is how long a claim lasts before another process may recover it; default
	// 60 (member `leaseSeconds`).
	LeaseSeconds int
}

// PollInterval returns PollIntervalMilliseconds as a duration.
func (d Dispatch) PollInterval() time.Duration {
	return time.Duration(d.PollIntervalMilliseconds) * time.Millisecond
}

// Lease returns LeaseSeconds as a duration.
func (d Dispatch) Lease() time.Duration { return time.Duration(d.LeaseSeconds) * time.Second }

// DefaultConcurrency is dispatch.concurrency when the file leaves it out. A worker is a
// goroutine, not a thread: delivery waits on the gateway's round trips, so the queue drains at
// about workers ÷ round trip, and eight workers left a 2-core machine idle while thousands of
// messages waited (docs/benchmarks.md, "Where delivery waited"). A provider's own
// concurrencyLimit still caps its lane.
const DefaultConcurrency = 64

// DefaultDispatch returns the dispatch values used for members the file leaves out.
func DefaultDispatch() Dispatch {
	return Dispatch{Concurrency: DefaultConcurrency, BatchSize: 100, MaxPayloadBytes: 10485760,
		PollIntervalMilliseconds: 1000, LeaseSeconds: 60}
}

// Audit configures the audit journal (docs/operations.md, "The audit journal").
type Audit struct {
	// Key keys the journal's HMAC chain and the pseudonyms; required, at least 32 bytes.
	Key Secret
}

// Retention says how long data is kept, in days (docs/runtime.md, "retention"). Every value is positive and
// RecordDays is at least PayloadDays.
type Retention struct {
	PayloadDays           int // default 7
	RecordDays            int // default 90
	SubmissionReceiptDays int // default 7
	// EventDays is how long delivered and failed webhook events are kept (member eventDays).
	EventDays int // default 7
}

// DefaultRetention returns the retention used for members the file leaves out.
func DefaultRetention() Retention {
	return Retention{PayloadDays: 7, RecordDays: 90, SubmissionReceiptDays: 7, EventDays: 7}
}

// Sandbox holds the script limits in force. The runtime file may lower each built-in
// limit (docs/runtime.md, "sandbox"), never raise it; members it leaves out keep the built-in value.
type Sandbox struct {
	SourceBytes           int // default and maximum 65536
	StringBytes           int // default and maximum 1048576
	PrepareMilliseconds   int // default and maximum 200
	InterpretMilliseconds int // default and maximum 200
	ReceiptMilliseconds   int // default and maximum 100
	CallStackFrames       int // default and maximum 1000
}

// DefaultSandbox returns the built-in limits, which are also the highest a runtime may set.
func DefaultSandbox() Sandbox {
	return Sandbox{SourceBytes: 64 << 10, StringBytes: 1 << 20, PrepareMilliseconds: 200,
		InterpretMilliseconds: 200, ReceiptMilliseconds: 100, CallStackFrames: 1000}
}
