package peer

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/libp2p/go-libp2p/core/network"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/peerstore"
	"github.com/libp2p/go-libp2p/core/protocol"
	"github.com/libp2p/go-libp2p/p2p/net/swarm"
	msmux "github.com/multiformats/go-multistream"

	"switchboard/engine"
)

// Outcome codes of Send (stable, shown to operators).
const (
	// CodeClosed: Send was called after Close (transient: another process may send it).
	CodeClosed = "provider.closed"
	// CodeInvalidRecipient: the recipient is not a peer id, or is this host (permanent).
	CodeInvalidRecipient = "peer.invalid-recipient"
	// CodeInvalidMessageID: the message id cannot be an envelope messageId (empty or over
	// MaxMessageIDBytes; permanent).
	CodeInvalidMessageID = "peer.invalid-message-id"
	// CodeTooLarge: the envelope would be over MaxEnvelopeBytes (permanent).
	CodeTooLarge = "peer.too-large"
	// CodeUnreachable: no connection to the peer could be opened (transient).
	CodeUnreachable = "peer.unreachable"
	// CodeProtocolUnsupported: the peer does not speak the provider's protocol (transient:
	// nothing was delivered, and the peer may be upgraded).
	CodeProtocolUnsupported = "peer.protocol-unsupported"
	// CodeTimeout: the send's time ran out, or its context ended (transient before the
	// envelope was written, maybe-sent after).
	CodeTimeout = "peer.timeout"
	// CodeStreamFailed: the stream broke (transient before the envelope was written,
	// maybe-sent after).
	CodeStreamFailed = "peer.stream-failed"
	// CodeResponseTooLarge: the answer is over MaxEnvelopeBytes (maybe-sent: the peer
	// answered, but what it said cannot be read).
	CodeResponseTooLarge = "peer.response-too-large"
	// CodeRefused: the peer answered {"accepted": false, …} (permanent).
	CodeRefused = "peer.refused"
	// CodeStreamReset: the pooled stream the request was on, or queued for, broke (transient:
	// the receiver's inbox answers a re-sent envelope from its idempotency record).
	CodeStreamReset = "peer.stream-reset"
	// CodeRemoteError: the peer answered a pooled request with an ERROR frame: it could not
	// read or store the envelope (transient).
	CodeRemoteError = "peer.remote-error"
)

// Send delivers out as one ReliableEnvelope (messageId = out.MessageID, payload =
// out.Parts["body"], or what the adapter's prepare returns) on a fresh stream, closes its
// write side and reads the answer to end of stream under the MaxEnvelopeBytes cap, all within
// SendTimeout, ctx and out.Deadline. It dials the address book's addresses, then the
// configured relays' /p2p-circuit addresses for a peer with no known address, and uses
// relayed (limited) connections.
//
// Classification (docs/operations.md, "The peer channel"): anything that fails before the whole envelope was
// written is transient; after it, maybe-sent. An answer of RESPONSE_GONE or
// {"accepted": true, …} is accepted with report delivered (ProviderReference = the inboxId when
// the answer carries one); {"accepted": false, …} is permanent (CodeRefused); any other
// complete answer is accepted with report delivered. With an adapter, interpret (when
// defined) classifies every answer but RESPONSE_GONE.
func (p *Provider) Send(ctx context.Context, out *engine.Outbound) engine.Outcome {
	if p.isClosed() {
		return transient(CodeClosed, "provider is closed")
	}
	if err := ctx.Err(); err != nil {
		return transient(CodeTimeout, "context ended before sending: "+err.Error())
	}
	target, err := libp2ppeer.Decode(out.Recipient)
	if err != nil || target == p.self {
		return engine.Outcome{Class: engine.OutcomePermanent, Code: CodeInvalidRecipient,
			Reason: "recipient is not another host's peer id"}
	}
	if out.MessageID == "" || len(out.MessageID) > MaxMessageIDBytes {
		return engine.Outcome{Class: engine.OutcomePermanent, Code: CodeInvalidMessageID,
			Reason: "message id cannot be an envelope messageId"}
	}
	ctx, cancel := context.WithTimeout(ctx, p.cfg.SendTimeout)
	defer cancel()
	if !out.Deadline.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, out.Deadline)
		defer cancel()
	}
	payload, proto := []byte(out.Parts["body"]), p.cfg.protocol
	if p.adapter != nil {
		var refused *engine.Outcome
		if payload, proto, refused = p.adapter.prepare(ctx, out, proto); refused != nil {
			return *refused
		}
	}
	env := Envelope{
		MessageID: out.MessageID,
		Version:   EnvelopeVersion,
		TsMs:      uint64(max(p.cfg.Clock.Now().UnixMilli(), 0)),
		Payload:   payload,
	}
	if size := EncodedSize(env); size > MaxEnvelopeBytes {
		return engine.Outcome{Class: engine.OutcomePermanent, Code: CodeTooLarge,
			Reason: fmt.Sprintf("envelope of %d bytes is over %d", size, MaxEnvelopeBytes)}
	}
	answer, failed := p.exchange(ctx, target, proto, AppendEnvelope(make([]byte, 0, EncodedSize(env)), env))
	switch {
	case failed != nil:
		return *failed
	case p.adapter != nil:
		// The answer is in; the script has its own deadline and must not lose the race
		// against what is left of the send's.
		return p.adapter.interpret(context.WithoutCancel(ctx), answer)
	}
	return classifyAnswer(answer)
}

// exchange performs one request/response: on a pooled stream when the pooled mode is on and
// the message goes on the provider's own protocol (an adapter may pick another), else on a
// fresh one-shot stream. It returns the complete answer, or the outcome of a failure.
func (p *Provider) exchange(ctx context.Context, target libp2ppeer.ID, proto protocol.ID, request []byte) ([]byte, *engine.Outcome) {
	if p.cfg.pooled != "" && proto == p.cfg.protocol {
		return p.pooledExchange(ctx, target, request)
	}
	return p.oneShot(ctx, target, proto, request)
}

// oneShot opens a fresh stream on proto and performs one one-shot exchange on it.
func (p *Provider) oneShot(ctx context.Context, target libp2ppeer.ID, proto protocol.ID, request []byte) ([]byte, *engine.Outcome) {
	ctx = network.WithAllowLimitedConn(ctx, "switchboard message")
	p.prepareDial(target)
	s, err := p.host.NewStream(ctx, target, proto)
	if err != nil {
		return nil, beforeWrite(ctx, err)
	}
	return p.oneShotOn(ctx, s, request)
}

// oneShotOn writes request on s, closes its write side and reads the answer to end of stream.
func (p *Provider) oneShotOn(ctx context.Context, s network.Stream, request []byte) ([]byte, *engine.Outcome) {
	p.cfg.OnTransport(EventSendOneShot)
	if deadline, ok := ctx.Deadline(); ok {
		_ = s.SetDeadline(deadline)
	}
	// A context that ends without a deadline (cancelled) breaks the stream too.
	stop := context.AfterFunc(ctx, func() { _ = s.Reset() })
	defer stop()

	if _, err := s.Write(request); err != nil {
		_ = s.Reset()
		return nil, beforeWrite(ctx, err)
	}
	// From here on the peer may have the whole envelope: every failure is maybe-sent.
	if err := s.CloseWrite(); err != nil {
		_ = s.Reset()
		return nil, afterWrite(ctx, err)
	}
	answer, err := io.ReadAll(io.LimitReader(s, MaxEnvelopeBytes+1))
	if err != nil {
		_ = s.Reset()
		return nil, afterWrite(ctx, err)
	}
	if len(answer) > MaxEnvelopeBytes {
		_ = s.Reset()
		return nil, &engine.Outcome{Class: engine.OutcomeMaybeSent, Code: CodeResponseTooLarge,
			Reason: fmt.Sprintf("answer is over %d bytes", MaxEnvelopeBytes)}
	}
	_ = s.Close()
	return answer, nil
}

// prepareDial makes sure the peerstore has somewhere to dial: a peer with no connection and
// no known address is tried through every configured relay. It also forgets the swarm's dial
// backoff for the peer, so that the engine's retry schedule alone decides when to try again.
func (p *Provider) prepareDial(target libp2ppeer.ID) {
	n := p.host.Network()
	if n.Connectedness(target) == network.Connected {
		return
	}
	if len(p.host.Peerstore().Addrs(target)) == 0 {
		if circuits := p.circuitAddrs(target); len(circuits) > 0 {
			p.host.Peerstore().AddAddrs(target, circuits, peerstore.TempAddrTTL)
		}
	}
	if sw, ok := n.(*swarm.Swarm); ok {
		sw.Backoff().Clear(target)
	}
}

// beforeWrite classifies a failure before the whole envelope was written: always transient.
func beforeWrite(ctx context.Context, err error) *engine.Outcome {
	var unsupported msmux.ErrNotSupported[protocol.ID]
	code := CodeStreamFailed
	switch {
	case ctx.Err() != nil:
		code = CodeTimeout
	case errors.As(err, &unsupported):
		code = CodeProtocolUnsupported
	case isDialError(err):
		code = CodeUnreachable
	}
	o := transient(code, err.Error())
	return &o
}

// afterWrite classifies a failure after the envelope was written: always maybe-sent, except
// that a peer that refused the protocol during lazy negotiation cannot have read it.
func afterWrite(ctx context.Context, err error) *engine.Outcome {
	var unsupported msmux.ErrNotSupported[protocol.ID]
	o := engine.Outcome{Class: engine.OutcomeMaybeSent, Code: CodeStreamFailed, Reason: err.Error()}
	switch {
	case errors.As(err, &unsupported):
		o = transient(CodeProtocolUnsupported, err.Error())
	case ctx.Err() != nil:
		o.Code = CodeTimeout
	}
	return &o
}

// isDialError reports whether err says no connection could be opened.
func isDialError(err error) bool {
	var dialErr *swarm.DialError
	return errors.As(err, &dialErr) || errors.Is(err, swarm.ErrNoAddresses) ||
		errors.Is(err, swarm.ErrDialBackoff) || errors.Is(err, swarm.ErrAllDialsFailed) ||
		errors.Is(err, swarm.ErrNoGoodAddresses)
}

func transient(code, reason string) engine.Outcome {
	return engine.Outcome{Class: engine.OutcomeTransient, Code: code, Reason: reason}
}

func (p *Provider) isClosed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closed
}
