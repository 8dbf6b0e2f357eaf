package peer

import (
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	ma "github.com/multiformats/go-multiaddr"

	"switchboard/engine"
	"switchboard/scripting"
)

// Defaults applied by New to zero Config fields.
const (
	// DefaultProtocol is the stream protocol id when Config.Protocol is empty.
	DefaultProtocol = "/switchboard/1.0.0/message"
	// DefaultSendTimeout bounds one whole send: dial, write, read (docs/operations.md, "The peer channel").
	DefaultSendTimeout = 20 * time.Second
	// DefaultReceiveTimeout bounds one whole inbound exchange: read, store, answer.
	DefaultReceiveTimeout = 20 * time.Second
	// DefaultMaxInbound is how many inbound envelopes are handled at once. Each may hold up
	// to MaxEnvelopeBytes in memory, so this bounds the inbound side's memory.
	DefaultMaxInbound = 16
	// DefaultMessagesPerMinute and DefaultBytesPerDay are each sender's inbox quota.
	DefaultMessagesPerMinute = 600
	DefaultBytesPerDay       = 100 << 20
	// DefaultKeepalive is how often an unused pooled stream is pinged.
	DefaultKeepalive = 10 * time.Second
	// DefaultIdleClose is how long a pooled stream stays open without a request.
	DefaultIdleClose = 5 * time.Minute
	// DefaultRequestTimeout bounds one request on a pooled stream, from its write to its
	// answer, and one ping's wait for its pong.
	DefaultRequestTimeout = 20 * time.Second
	// DefaultPooledStreams is how many pooled streams a sender opens to one peer at most
	// when its caller sets no bound: serve sets the dispatcher's workers, whose default it is
	// (docs/operations.md, "The pooled transport", says why).
	DefaultPooledStreams = 64
)

// Config is one peer provider, built by the caller from the runtime file's resolved values
// (engine/runtime PeerProvider). The provider never reads files or secrets itself.
type Config struct {
	// ID is the provider's id in the package; it only names the provider in logs and errors.
	ID string
	// IdentityKey is the host's persistent private key as Keygen wrote it (see
	// ParseIdentityKey). Required.
	IdentityKey []byte
	// Listen holds multiaddrs to listen on (TCP and QUIC); empty = dial out and through
	// relays only.
	Listen []string
	// Protocol is the one-shot protocol's id (one stream per envelope); empty =
	// DefaultProtocol.
	Protocol string
	// PooledProtocol is the pooled protocol's id (long-lived framed streams,
	// docs/operations.md, "The pooled transport"); empty = the pooled mode is off: this host
	// neither offers nor accepts it. With it, a send opens the pooled protocol first and falls
	// back to Protocol for a peer that does not speak it.
	PooledProtocol string
	// Keepalive, IdleClose and RequestTimeout time the pooled streams; zero = DefaultKeepalive,
	// DefaultIdleClose, DefaultRequestTimeout.
	Keepalive, IdleClose, RequestTimeout time.Duration
	// PooledStreams bounds the pooled streams to one peer; zero = DefaultPooledStreams.
	PooledStreams int
	// NewTicker makes the ticker of each pooled stream's keepalive and idle close and returns
	// its channel and its stop function; nil = a time.Ticker. Tests pass their own to move
	// time without waiting.
	NewTicker func(d time.Duration) (<-chan time.Time, func())
	// OnTransport, when set, is told what the sending side's transport does (sends by protocol,
	// pooled streams opened, closed and reset, fallbacks to the one-shot protocol), for metrics.
	OnTransport func(TransportEvent)
	// Relays holds circuit relay v2 multiaddrs, each ending in /p2p/<relay id>. Start keeps a
	// reservation on each, and a recipient with no known address is dialled through them.
	Relays []string
	// RelayService makes this host a circuit relay. Each circuit may last RelayCircuitDuration
	// and carry RelayCircuitBytes in each direction before the relay resets it; zero =
	// DefaultRelayCircuitDuration, DefaultRelayCircuitBytes, which carry a 10 MiB envelope and
	// a pooled stream's keepalives for half an hour.
	RelayService         bool
	RelayCircuitDuration time.Duration
	RelayCircuitBytes    int64
	// AddressBook maps peer ids to the multiaddrs they are reached at, direct or
	// /p2p-circuit addresses (a trailing /p2p/<id> is allowed and must match the key).
	AddressBook map[string][]string
	// Inbox receives inbound envelopes. Nil = this host does not accept messages (no stream
	// handler is registered).
	Inbox engine.Inbox
	// AllowedPeers holds the peer ids whose envelopes the inbox takes; AnyPeer takes every
	// peer's. Any other sender is answered {"accepted":false,"code":"peer.not-allowed"} and
	// nothing is stored. (The runtime file's default, the address book's peers, is applied by
	// engine/runtime; here an empty list allows no peer.)
	AllowedPeers []string
	AnyPeer      bool
	// MessagesPerMinute and BytesPerDay bound what each sender puts in the inbox: new
	// envelopes per minute (a token bucket holding a minute's worth, in memory) and payload
	// bytes per UTC day (counted by the Inbox with each envelope, so the count survives a
	// restart). Beyond them a sender is answered {"accepted":false,"code":"peer.over-quota"};
	// a duplicate is answered as always and counts nothing. Zero = DefaultMessagesPerMinute,
	// DefaultBytesPerDay.
	MessagesPerMinute int
	BytesPerDay       int64
	// OnRefused, when set, is told the code of each envelope the inbox refused
	// (CodeNotAllowed, CodeOverQuota), for metrics.
	OnRefused func(code string)
	// OnPeerConnected, when set, is called with the peer id each time a connection to a
	// peer opens (in either direction), from its own goroutine. The caller makes that peer's
	// queued messages due (engine.PeerDue) and wakes the dispatcher.
	OnPeerConnected func(peerID string)
	// Logger receives the provider's log records, each with the attribute provider = ID
	// (added here: the caller's logger must not carry it); nil = discard.
	Logger *slog.Logger
	// Clock stamps envelopes (tsMs) and inbox entries (receivedAt); nil = engine.SystemClock.
	Clock engine.Clock
	// SendTimeout bounds one send; zero = DefaultSendTimeout.
	SendTimeout time.Duration
	// ReceiveTimeout bounds one inbound exchange; zero = DefaultReceiveTimeout. A sender that
	// stalls longer has its stream reset.
	ReceiveTimeout time.Duration
	// MaxInbound bounds concurrent inbound exchanges; zero = DefaultMaxInbound.
	MaxInbound int
	// Source is the provider's adapter script (docs/adapters.md: prepare required, interpret
	// optional); empty = no adapter, the payload is the rendered body part.
	Source string
	// ScriptName names the adapter in errors and logs (its path in the package).
	ScriptName string
	// Limits lowers the adapter's sandbox limits; zero members keep scripting.DefaultLimits.
	Limits scripting.Limits
}

// resolved is a Config checked and parsed once by New.
type resolved struct {
	Config
	protocol    protocol.ID
	pooled      protocol.ID // "" = the pooled mode is off
	listen      []ma.Multiaddr
	relays      []libp2ppeer.AddrInfo
	addressBook []libp2ppeer.AddrInfo
	allowed     map[libp2ppeer.ID]bool
}

// resolve validates cfg, applies defaults and parses every address.
func (cfg Config) resolve() (resolved, error) {
	r := resolved{Config: cfg}
	if len(cfg.IdentityKey) == 0 {
		return r, errors.New("identity key is required")
	}
	if r.Protocol == "" {
		r.Protocol = DefaultProtocol
	}
	if r.Protocol[0] != '/' {
		return r, fmt.Errorf("protocol %q must start with /", r.Protocol)
	}
	r.protocol = protocol.ID(r.Protocol)
	if r.PooledProtocol != "" {
		if r.PooledProtocol[0] != '/' || r.PooledProtocol == r.Protocol {
			return r, fmt.Errorf("pooled protocol %q must start with / and differ from the protocol", r.PooledProtocol)
		}
		r.pooled = protocol.ID(r.PooledProtocol)
	}
	r.Keepalive = orDefault(r.Keepalive, DefaultKeepalive)
	r.IdleClose = orDefault(r.IdleClose, DefaultIdleClose)
	r.RequestTimeout = orDefault(r.RequestTimeout, DefaultRequestTimeout)
	r.RelayCircuitDuration = orDefault(r.RelayCircuitDuration, DefaultRelayCircuitDuration)
	r.RelayCircuitBytes = orDefault(r.RelayCircuitBytes, DefaultRelayCircuitBytes)
	r.PooledStreams = orDefault(r.PooledStreams, DefaultPooledStreams)
	if r.NewTicker == nil {
		r.NewTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	if r.OnTransport == nil {
		r.OnTransport = func(TransportEvent) {}
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	r.Logger = r.Logger.With("provider", r.ID)
	if r.Clock == nil {
		r.Clock = engine.SystemClock{}
	}
	if r.SendTimeout <= 0 {
		r.SendTimeout = DefaultSendTimeout
	}
	if r.ReceiveTimeout <= 0 {
		r.ReceiveTimeout = DefaultReceiveTimeout
	}
	if r.MaxInbound <= 0 {
		r.MaxInbound = DefaultMaxInbound
	}
	if r.MessagesPerMinute <= 0 {
		r.MessagesPerMinute = DefaultMessagesPerMinute
	}
	if r.BytesPerDay <= 0 {
		r.BytesPerDay = DefaultBytesPerDay
	}
	if r.OnRefused == nil {
		r.OnRefused = func(string) {}
	}
	r.allowed = make(map[libp2ppeer.ID]bool, len(cfg.AllowedPeers))
	for _, s := range cfg.AllowedPeers {
		id, err := libp2ppeer.Decode(s)
		if err != nil {
			return r, fmt.Errorf("allowed peers: %q is not a peer id: %w", s, err)
		}
		r.allowed[id] = true
	}
	for _, s := range cfg.Listen {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return r, fmt.Errorf("listen address %q: %w", s, err)
		}
		r.listen = append(r.listen, a)
	}
	for _, s := range cfg.Relays {
		ai, err := libp2ppeer.AddrInfoFromString(s)
		if err != nil {
			return r, fmt.Errorf("relay %q must be a multiaddr ending in /p2p/<peer id>: %w", s, err)
		}
		r.relays = append(r.relays, *ai)
	}
	ids := make([]string, 0, len(cfg.AddressBook))
	for id := range cfg.AddressBook {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		ai, err := addressBookEntry(id, cfg.AddressBook[id])
		if err != nil {
			return r, err
		}
		r.addressBook = append(r.addressBook, ai)
	}
	return r, nil
}

// orDefault returns v, or def when v is zero or less.
func orDefault[T time.Duration | int | int64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// addressBookEntry parses one address book entry. Each address may end in /p2p/<id>, which
// must then be the entry's id; a /p2p-circuit address keeps its relay part.
func addressBookEntry(id string, addrs []string) (libp2ppeer.AddrInfo, error) {
	pid, err := libp2ppeer.Decode(id)
	if err != nil {
		return libp2ppeer.AddrInfo{}, fmt.Errorf("address book: %q is not a peer id: %w", id, err)
	}
	ai := libp2ppeer.AddrInfo{ID: pid}
	for _, s := range addrs {
		a, err := ma.NewMultiaddr(s)
		if err != nil {
			return ai, fmt.Errorf("address book %s: address %q: %w", id, s, err)
		}
		transport, named := libp2ppeer.SplitAddr(a)
		if named != "" && named != pid {
			return ai, fmt.Errorf("address book %s: address %q names another peer", id, s)
		}
		a = transport
		if len(a) == 0 {
			return ai, fmt.Errorf("address book %s: address %q has no transport part", id, s)
		}
		ai.Addrs = append(ai.Addrs, a)
	}
	return ai, nil
}
