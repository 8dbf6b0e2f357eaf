package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"

	"switchboard/engine"
)

// handleStream receives one envelope: it reads to end of stream under the MaxEnvelopeBytes
// cap and ReceiveTimeout, decodes and checks the envelope, stores it with its idempotency
// record through Inbox.PutInbox, answers the stored (or cached) response, or RESPONSE_GONE for
// a duplicate whose response was not kept, or a refusal (peer.not-allowed, peer.over-quota),
// and closes. Anything wrong —
// garbage, an oversize or stalled sender, a store failure — resets the stream, and nothing is
// stored: the sender sees a broken stream and tries again.
func (p *Provider) handleStream(s network.Stream) {
	if !p.track() {
		_ = s.Reset()
		return
	}
	defer p.work.Done()
	ctx, cancel := context.WithTimeout(p.life, p.cfg.ReceiveTimeout)
	defer cancel()
	_ = s.SetDeadline(time.Now().Add(p.cfg.ReceiveTimeout))
	stop := context.AfterFunc(ctx, func() { _ = s.Reset() }) // Close, or a stalled slot wait
	defer stop()

	select {
	case p.inbound <- struct{}{}:
		defer func() { <-p.inbound }()
	case <-ctx.Done():
		return
	}
	answer, err := p.receive(ctx, s)
	if err != nil {
		p.cfg.Logger.Debug("inbound envelope dropped",
			"from", s.Conn().RemotePeer().String(), "error", err)
		_ = s.Reset()
		return
	}
	if _, err := s.Write(answer); err != nil {
		p.cfg.Logger.Debug("inbound answer not written", "error", err)
		_ = s.Reset()
		return
	}
	_ = s.Close()
}

// receive reads, checks and stores one envelope and returns the answer to write. A sender the
// inbox does not take, or one over its quota, is answered with a refusal and nothing is stored;
// a duplicate is answered as always and spends nothing of the quota.
func (p *Provider) receive(ctx context.Context, s network.Stream) ([]byte, error) {
	from := s.Conn().RemotePeer()
	if !p.cfg.allows(from) {
		// The envelope is read to its end, unkept, so that the sender reads a whole answer
		// (a refusal is final for it) instead of a broken stream it would try again.
		if n, err := io.Copy(io.Discard, io.LimitReader(s, MaxEnvelopeBytes+1)); err != nil || n > MaxEnvelopeBytes {
			return nil, fmt.Errorf("read a refused envelope: %d bytes, %v", n, err)
		}
		p.cfg.OnRefused(CodeNotAllowed)
		return refusal(CodeNotAllowed), nil
	}
	body, err := io.ReadAll(io.LimitReader(s, MaxEnvelopeBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read envelope: %w", err)
	}
	if len(body) > MaxEnvelopeBytes {
		return nil, fmt.Errorf("envelope is over %d bytes", MaxEnvelopeBytes)
	}
	env, err := DecodeEnvelope(body)
	if err != nil {
		return nil, err
	}
	admitted, undo := p.buckets.take(from, p.cfg.Clock.Now())
	return p.keep(ctx, from, s.Conn().LocalPeer(), env, admitted, undo)
}

// keep stores one checked envelope from a sender through Inbox.PutInbox and returns the
// answer: the acknowledgement of a new envelope, the cached answer (or RESPONSE_GONE) of a
// duplicate, or the over-quota refusal. admitted says whether the sender's per-minute bucket
// had room (undo gives the token back); a duplicate is answered either way and spends nothing.
// Both protocols store under the one-shot protocol's id, so that a message is one message
// whichever protocol carried it.
func (p *Provider) keep(ctx context.Context, from, to libp2ppeer.ID, env Envelope, admitted bool, undo func()) ([]byte, error) {
	now := p.cfg.Clock.Now()
	var ackErr error
	res, err := p.cfg.Inbox.PutInbox(ctx, engine.InboxEntry{
		Channel:    engine.ChannelPeer,
		Provider:   p.cfg.ID,
		To:         to.String(),
		From:       from.String(),
		Protocol:   p.cfg.Protocol,
		MessageID:  env.MessageID,
		TsMs:       env.TsMs,
		ReceivedAt: now,
		Payload:    env.Payload,
		// Only a new envelope counts: the Inbox answers a duplicate whatever the quota says.
		BytesPerDay: p.cfg.BytesPerDay,
		RefuseNew:   !admitted,
		// The store draws the inbox id in commit order and builds the answer from it.
		Respond: func(inboxID string) []byte {
			b, err := acknowledgement(inboxID)
			if err != nil {
				ackErr = err
			}
			return b
		},
	})
	if err == nil && ackErr != nil {
		err = ackErr
	}
	if admitted && (err != nil || res.Duplicate || res.OverQuota) {
		undo() // nothing new was stored
	}
	if err != nil {
		p.cfg.Logger.Warn("inbox refused an envelope", "error", err)
		return nil, fmt.Errorf("store envelope: %w", err)
	}
	switch {
	case res.OverQuota:
		p.cfg.OnRefused(CodeOverQuota)
		return refusal(CodeOverQuota), nil
	case res.Response != nil:
		return res.Response, nil
	case res.Duplicate:
		return []byte(ResponseGone), nil
	}
	return nil, fmt.Errorf("the inbox kept the envelope without an answer")
}

// acknowledgement is the answer to a newly stored envelope: {"accepted":true,"inboxId":"…"}.
func acknowledgement(inboxID string) ([]byte, error) {
	b, err := json.Marshal(struct {
		Accepted bool   `json:"accepted"`
		InboxID  string `json:"inboxId"`
	}{true, inboxID})
	if err != nil {
		return nil, fmt.Errorf("encode acknowledgement: %w", err)
	}
	return b, nil
}
