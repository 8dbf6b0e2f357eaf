package peer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"

	"switchboard/engine"
)

// pooledStream is one long-lived pooled stream to a peer and the goroutine that owns it
// (docs/operations.md, "The pooled transport"). Requests are handed to the goroutine one at a
// time through calls: one is in flight, the others wait on the channel in the order they
// came. When the stream ends, done is closed; a request still waiting then learns why from
// failure, or, when requeue is set, that it was never written and may be picked again.
type pooledStream struct {
	target  libp2ppeer.ID
	calls   chan *call
	done    chan struct{}
	waiting int // requests queued on or in flight on the stream; guarded by streamPool.mu

	// Set before done is closed.
	failure engine.Outcome
	requeue bool
}

// call is one request handed to a stream, and where its result goes (buffered, 1).
type call struct {
	ctx     context.Context
	request []byte
	result  chan callResult
}

type callResult struct {
	answer []byte
	failed *engine.Outcome
}

func newPooledStream(target libp2ppeer.ID) *pooledStream {
	return &pooledStream{target: target, calls: make(chan *call), done: make(chan struct{})}
}

// do queues request on s and waits for its result. again says that the stream ended before
// taking the request, without writing it, and the request may be picked again.
func (s *pooledStream) do(ctx context.Context, request []byte) (answer []byte, failed *engine.Outcome, again bool) {
	c := &call{ctx: ctx, request: request, result: make(chan callResult, 1)}
	select {
	case s.calls <- c:
		r := <-c.result // the stream's goroutine answers every call it takes
		return r.answer, r.failed, false
	case <-s.done:
		if s.requeue {
			return nil, nil, true
		}
		o := s.failure
		return nil, &o, false
	case <-ctx.Done():
		o := transient(CodeTimeout, "queued for a pooled stream: "+ctx.Err().Error())
		return nil, &o, false
	}
}

// startStream runs s's goroutine; when the provider is closed it ends s at once and returns
// false.
func (p *Provider) startStream(s *pooledStream) bool {
	if !p.track() {
		s.failure = transient(CodeClosed, "provider is closed")
		close(s.done)
		return false
	}
	go func() {
		defer p.work.Done()
		p.runStream(s)
	}()
	return true
}

// runStream opens the stream, offering the pooled protocol first, and serves s's requests
// until it breaks, stays idle for IdleClose, or the provider closes. A peer that chose the
// one-shot protocol has the first waiting request sent one-shot on the stream just opened.
func (p *Provider) runStream(s *pooledStream) {
	ctx, cancel := context.WithTimeout(p.life, p.cfg.RequestTimeout)
	ctx = network.WithAllowLimitedConn(ctx, "switchboard pooled stream")
	p.prepareDial(s.target)
	ns, err := p.host.NewStream(ctx, s.target, p.cfg.pooled, p.cfg.protocol)
	if err != nil {
		s.failure = *beforeWrite(ctx, err)
		cancel()
		p.endStream(s, false)
		return
	}
	cancel()
	if ns.Protocol() != p.cfg.pooled {
		p.cfg.OnTransport(EventFallback)
		p.cfg.Logger.Debug("peer speaks the one-shot protocol only", "peer", s.target.String())
		select {
		case c := <-s.calls:
			answer, failed := p.oneShotOn(c.ctx, ns, c.request)
			c.result <- callResult{answer, failed}
		default:
			_ = ns.Reset()
		}
		s.requeue = true
		p.endStream(s, true)
		return
	}
	p.cfg.OnTransport(EventStreamOpened)
	defer p.cfg.OnTransport(EventStreamClosed)
	if err := p.serveStream(s, ns); err != nil {
		p.cfg.OnTransport(EventStreamReset)
		p.cfg.Logger.Debug("pooled stream reset", "peer", s.target.String(), "error", err)
		_ = ns.Reset()
		s.failure = transient(CodeStreamReset, "pooled stream reset: "+err.Error())
	} else {
		_ = ns.Close()
		s.requeue = true
	}
	p.endStream(s, false)
}

// endStream takes s out of the pool, then tells its waiting requests.
func (p *Provider) endStream(s *pooledStream, oneShot bool) {
	p.pool.remove(s, oneShot)
	close(s.done)
}

// serveStream is the stream's loop: one request at a time, a PING on every keepalive tick
// without a request since the last, and the end after IdleClose without one. It returns nil
// for an idle close, and the error that broke the stream otherwise.
func (p *Provider) serveStream(s *pooledStream, ns network.Stream) error {
	fr := NewFrameReader(ns, MaxEnvelopeBytes)
	ticks, stop := p.cfg.NewTicker(p.cfg.Keepalive)
	defer stop()
	idleTicks := int((p.cfg.IdleClose + p.cfg.Keepalive - 1) / p.cfg.Keepalive)
	idle, used := 0, false
	for {
		select {
		case c := <-s.calls:
			used = true
			if err := c.ctx.Err(); err != nil {
				// Its sender gave up while it was being handed over: nothing was written,
				// and the stream stays as it is.
				o := transient(CodeTimeout, "queued for a pooled stream: "+err.Error())
				c.result <- callResult{failed: &o}
				continue
			}
			r, err := p.pooledRequest(c, ns, fr)
			c.result <- r
			if err != nil {
				return err
			}
		case <-ticks:
			if used {
				idle, used = 0, false
				continue
			}
			if idle++; idle >= idleTicks {
				return nil
			}
			if err := p.ping(ns, fr); err != nil {
				return err
			}
		case <-p.life.Done():
			return errors.New("provider closed")
		}
	}
}

// pooledRequest writes one REQUEST frame and reads until its RESPONSE or ERROR, within
// RequestTimeout and the call's context. Every failure is transient, the request's and the
// queued ones' alike: the receiver's inbox answers a re-sent envelope from its record. An
// error breaks the stream; an ERROR frame ends the request only.
func (p *Provider) pooledRequest(c *call, ns network.Stream, fr *FrameReader) (callResult, error) {
	p.cfg.OnTransport(EventSendPooled)
	deadline := time.Now().Add(p.cfg.RequestTimeout)
	if d, ok := c.ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = ns.SetDeadline(deadline)
	defer func() { _ = ns.SetDeadline(time.Time{}) }()
	stop := context.AfterFunc(c.ctx, func() { _ = ns.Reset() })
	defer stop()
	// answered ends a request that got its answer. If the sender gave up in the meantime, its
	// cancellation has reset the stream, which must then end too.
	answered := func(r callResult) (callResult, error) {
		if !stop() {
			return r, errors.New("the sender gave up as its answer came: the stream was reset")
		}
		return r, nil
	}
	fail := func(err error) (callResult, error) {
		code := CodeStreamReset
		var timeout interface{ Timeout() bool }
		if c.ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &timeout) && timeout.Timeout()) {
			code = CodeTimeout
		}
		o := transient(code, "pooled stream reset: "+err.Error())
		return callResult{failed: &o}, err
	}
	// The header, then the envelope as Send encoded it: no copy of up to 10 MiB a message.
	if _, err := ns.Write(appendFrameHeader(nil, FrameRequest, len(c.request))); err != nil {
		return fail(fmt.Errorf("write the request: %w", err))
	}
	if _, err := ns.Write(c.request); err != nil {
		return fail(fmt.Errorf("write the request: %w", err))
	}
	for {
		typ, payload, err := fr.ReadFrame()
		if err != nil {
			return fail(fmt.Errorf("read the answer: %w", err))
		}
		switch typ {
		case FrameResponse:
			return answered(callResult{answer: payload})
		case FrameError:
			o := transient(CodeRemoteError, "peer could not take the envelope: "+clip(payload))
			return answered(callResult{failed: &o})
		case FramePing:
			if _, err := ns.Write(AppendFrame(nil, FramePong, nil)); err != nil {
				return fail(fmt.Errorf("write a pong: %w", err))
			}
		case FramePong:
		default:
			return fail(fmt.Errorf("the peer sent a %s frame", typ))
		}
	}
}

// ping writes a PING and waits up to RequestTimeout for the PONG.
func (p *Provider) ping(ns network.Stream, fr *FrameReader) error {
	_ = ns.SetDeadline(time.Now().Add(p.cfg.RequestTimeout))
	defer func() { _ = ns.SetDeadline(time.Time{}) }()
	if _, err := ns.Write(AppendFrame(nil, FramePing, nil)); err != nil {
		return fmt.Errorf("write a ping: %w", err)
	}
	for {
		typ, _, err := fr.ReadFrame()
		switch {
		case err != nil:
			return fmt.Errorf("wait for a pong: %w", err)
		case typ == FramePong:
			return nil
		case typ == FramePing:
			if _, err := ns.Write(AppendFrame(nil, FramePong, nil)); err != nil {
				return fmt.Errorf("write a pong: %w", err)
			}
		default:
			return fmt.Errorf("the peer sent a %s frame while idle", typ)
		}
	}
}
