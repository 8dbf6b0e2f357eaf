// Package peer is the provider for the peer channel (docs/operations.md, "The peer channel"): a libp2p host per peer
// provider that sends messages to other hosts as reliable envelopes and receives theirs into
// an inbox.
//
// It owns:
//   - the host: a persistent Ed25519 identity (Keygen, IDFromKeyFile, IDFromKey for
//     `switchboard peer keygen` and `peer id`), TCP and QUIC, Noise and TLS, yamux, a
//     resource manager sized for 10 MiB envelopes, the runtime's address book, reservations on
//     the configured circuit relays (v2), and optionally a relay service of its own whose
//     circuits carry a 10 MiB envelope;
//   - the wire format: the protobuf ReliableEnvelope (1 messageId, 2 version = 1, 3 tsMs,
//     4 payload) encoded by hand with protowire, byte-compatible with the protobufjs encoding
//     of the peer systems this channel interoperates with (envelope.go); one stream per message, write, close-write, read the
//     answer to end of stream (the one-shot protocol);
//   - the pooled protocol, when Config.PooledProtocol is set (docs/operations.md, "The pooled
//     transport"): the frame codec (frame.go), long-lived streams to each peer carrying one
//     request at a time with keepalive, idle close and a per-request timeout (pool.go,
//     pooled_stream.go), the receiving side behind the same gate and inbox (pooled_receive.go),
//     and the fallback to the one-shot protocol for a peer that does not speak it;
//   - sending (engine.Provider): the classification of every way a send can end (send.go,
//     answer.go). Before the whole envelope was written, a failure is transient; after, it is
//     maybe-sent. RESPONSE_GONE or {"accepted": true, …} is accepted with report delivered,
//     {"accepted": false, …} permanent (peer.refused), any other complete answer delivered;
//   - receiving (receive.go): read under the cap and a deadline, check the envelope, hand it
//     to engine.Inbox.PutInbox, which stores it with its idempotency record (peer, protocol,
//     messageId, in) in one transaction and tells duplicates apart, then answer the stored or
//     cached response, or RESPONSE_GONE;
//   - connection events: Config.OnPeerConnected is told when a peer becomes connected, so
//     the caller can make that peer's queued messages due at once;
//   - the optional adapter (adapter.go): prepare(message, profile) returns {payload,
//     payloadEncoding?, protocol?} to shape the bytes an application protocol expects,
//     interpret(response) reads the answer ({bytes, text?, json?}) into an outcome as for
//     HTTP adapters; a prepare deadline is transient, other prepare failures permanent, an
//     interpret failure maybe-sent (the peer answered but the answer cannot be read).
//
// Decisions made here (each documented where it is made): a pooled stream's failure is
// transient for every request on it, because the receiver's inbox answers a resent envelope
// from its record; both protocols store under the one-shot protocol's id; a sender opens at
// most PooledStreams streams to one peer (serve: the dispatcher's workers, measured by
// BenchmarkSend and by the bench through the whole stack); a recipient with no known address
// is dialled through every configured relay; the swarm's own dial backoff is
// cleared before each send, so that the engine's retry schedule alone paces retries; Start
// dials the address book once so that peers waiting on each other connect; a peer that
// refuses the protocol during lazy negotiation cannot have read the envelope, so that is
// transient even after the write.
//
// peer is the only package in the project that imports go-libp2p. It imports engine (types),
// scripting (the adapter) and the standard library besides; it must never import packages,
// store, engine/runtime, cmd or goja: the caller resolves the runtime file and the package's
// adapter into a Config.
package peer
