package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
)

// handlePooled serves one inbound pooled stream (docs/operations.md, "The pooled transport"):
// frames one after the other until the sender closes the stream, stays silent for longer than
// IdleClose plus a keepalive, or breaks the framing. A REQUEST is answered with a RESPONSE (the
// same answer the one-shot protocol writes) or, when the envelope cannot be read or stored, an
// ERROR frame that ends that request only; a PING is answered with a PONG. The allow-list, the
// sender's per-minute bucket and a slot of MaxInbound are taken from the frame's header, before
// its payload is read into memory; a refused payload is skipped unread.
func (p *Provider) handlePooled(s network.Stream) {
	if !p.track() {
		_ = s.Reset()
		return
	}
	defer p.work.Done()
	stop := context.AfterFunc(p.life, func() { _ = s.Reset() }) // Close
	defer stop()
	from := s.Conn().RemotePeer()
	fr := NewFrameReader(s, MaxEnvelopeBytes)
	for {
		if err := p.serveFrame(s, fr, from); err != nil {
			if errors.Is(err, io.EOF) {
				_ = s.Close()
				return
			}
			p.cfg.Logger.Debug("inbound pooled stream reset", "from", from.String(), "error", err)
			_ = s.Reset()
			return
		}
	}
}

// serveFrame reads and answers one frame. An error ends the stream: io.EOF when the sender
// closed it between frames, anything else breaks it.
func (p *Provider) serveFrame(s network.Stream, fr *FrameReader, from libp2ppeer.ID) error {
	// Between frames the stream may wait as long as a sender keeps an idle one open.
	_ = s.SetDeadline(time.Now().Add(p.cfg.IdleClose + p.cfg.Keepalive))
	typ, _, err := fr.ReadHeader()
	if err != nil {
		return err
	}
	_ = s.SetDeadline(time.Now().Add(p.cfg.ReceiveTimeout))
	var answer []byte
	switch typ {
	case FramePing:
		if err := fr.Discard(); err != nil {
			return err
		}
		answer = AppendFrame(nil, FramePong, nil)
	case FramePong:
		return fr.Discard()
	case FrameRequest:
		if answer, err = p.serveRequest(s, fr, from); err != nil {
			return err
		}
	default:
		return fmt.Errorf("a sender sent a %s frame", typ)
	}
	if _, err := s.Write(answer); err != nil {
		return fmt.Errorf("write the answer: %w", err)
	}
	return nil
}

// serveRequest takes one REQUEST frame whose header was read and returns the frame that
// answers it. An error breaks the stream; an envelope that cannot be read or stored is
// answered with an ERROR frame, and the stream goes on.
func (p *Provider) serveRequest(s network.Stream, fr *FrameReader, from libp2ppeer.ID) ([]byte, error) {
	if !p.cfg.allows(from) {
		if err := fr.Discard(); err != nil {
			return nil, err
		}
		p.cfg.OnRefused(CodeNotAllowed)
		return AppendFrame(nil, FrameResponse, refusal(CodeNotAllowed)), nil
	}
	admitted, undo := p.buckets.take(from, p.cfg.Clock.Now())
	if !admitted {
		// Unlike the one-shot protocol, whose envelope is in memory before the bucket is
		// asked, a duplicate is not told apart here: the sender tries again in a minute.
		if err := fr.Discard(); err != nil {
			return nil, err
		}
		p.cfg.OnRefused(CodeOverQuota)
		return AppendFrame(nil, FrameResponse, refusal(CodeOverQuota)), nil
	}
	ctx, cancel := context.WithTimeout(p.life, p.cfg.ReceiveTimeout)
	defer cancel()
	select {
	case p.inbound <- struct{}{}:
		defer func() { <-p.inbound }()
	case <-ctx.Done():
		undo()
		return nil, fmt.Errorf("wait for an inbound slot: %w", ctx.Err())
	}
	body, err := fr.Payload()
	if err != nil {
		undo()
		return nil, err
	}
	env, err := DecodeEnvelope(body)
	if err != nil {
		undo()
		return AppendFrame(nil, FrameError, []byte(err.Error())), nil
	}
	answer, err := p.keep(ctx, from, s.Conn().LocalPeer(), env, true, undo)
	if err != nil {
		return AppendFrame(nil, FrameError, []byte("the envelope was not stored")), nil
	}
	return AppendFrame(nil, FrameResponse, answer), nil
}
