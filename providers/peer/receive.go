package peer

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"switchboard/engine"
)

// handleStream receives one envelope (SPEC section 7): it reads to end of stream under the
// MaxEnvelopeBytes cap and ReceiveTimeout, decodes and checks the envelope, stores it with its
// idempotency record through Inbox.PutInbox, answers the stored (or cached) response, or
// RESPONSE_GONE for a duplicate whose response was not kept, and closes. Anything wrong —
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
		p.cfg.Logger.Debug("inbound envelope dropped", "provider", p.cfg.ID,
			"from", s.Conn().RemotePeer().String(), "error", err)
		_ = s.Reset()
		return
	}
	if _, err := s.Write(answer); err != nil {
		p.cfg.Logger.Debug("inbound answer not written", "provider", p.cfg.ID, "error", err)
		_ = s.Reset()
		return
	}
	_ = s.Close()
}

// receive reads, checks and stores one envelope and returns the answer to write.
func (p *Provider) receive(ctx context.Context, s network.Stream) ([]byte, error) {
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
	var ackErr error
	res, err := p.cfg.Inbox.PutInbox(ctx, engine.InboxEntry{
		Channel:    engine.ChannelPeer,
		Provider:   p.cfg.ID,
		To:         s.Conn().LocalPeer().String(),
		From:       s.Conn().RemotePeer().String(),
		Protocol:   p.cfg.Protocol,
		MessageID:  env.MessageID,
		TsMs:       env.TsMs,
		ReceivedAt: p.cfg.Clock.Now(),
		Payload:    env.Payload,
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
	if err != nil {
		p.cfg.Logger.Warn("inbox refused an envelope", "provider", p.cfg.ID, "error", err)
		return nil, fmt.Errorf("store envelope: %w", err)
	}
	switch {
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
