package peer

import (
	"context"
	"sync"

	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"

	"switchboard/engine"
)

// TransportEvent is one thing the sending side's transport did, reported through
// Config.OnTransport for metrics.
type TransportEvent int

// The transport events.
const (
	// EventSendOneShot: an envelope is being sent on a one-shot stream.
	EventSendOneShot TransportEvent = iota
	// EventSendPooled: an envelope is being sent on a pooled stream.
	EventSendPooled
	// EventStreamOpened and EventStreamClosed: a pooled stream opened, and ended for any
	// reason (their difference is the pooled streams open).
	EventStreamOpened
	EventStreamClosed
	// EventStreamReset: a pooled stream broke (every request on or queued for it failed).
	EventStreamReset
	// EventFallback: a peer asked for the pooled protocol chose the one-shot one.
	EventFallback
)

// streamPool holds the pooled streams to each peer, and which peers were found to speak
// only the one-shot protocol.
type streamPool struct {
	mu    sync.Mutex
	peers map[libp2ppeer.ID]*peerStreams
}

// peerStreams are the pooled streams to one peer.
type peerStreams struct {
	oneShot bool // the peer chose the one-shot protocol: send it one-shot until it disconnects
	streams []*pooledStream
}

func newStreamPool() *streamPool {
	return &streamPool{peers: map[libp2ppeer.ID]*peerStreams{}}
}

// queued returns how many requests are queued on or in flight on the streams to target.
func (sp *streamPool) queued(target libp2ppeer.ID) int {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	n := 0
	if ps := sp.peers[target]; ps != nil {
		for _, s := range ps.streams {
			n += s.waiting
		}
	}
	return n
}

// pick returns the stream a request to target queues on, counted as one more waiter, or nil
// when target speaks only the one-shot protocol. It takes the live stream with the fewest
// waiters; when every stream has one and fewer than limit are open, it makes a new one, which
// start runs (false: start ended it at once). The caller calls done on the stream when its
// request has ended.
func (sp *streamPool) pick(target libp2ppeer.ID, limit int, start func(*pooledStream) bool) *pooledStream {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	ps := sp.peers[target]
	if ps == nil {
		ps = &peerStreams{}
		sp.peers[target] = ps
	}
	if ps.oneShot {
		return nil
	}
	var best *pooledStream
	for _, s := range ps.streams {
		if best == nil || s.waiting < best.waiting {
			best = s
		}
	}
	if best == nil || (best.waiting > 0 && len(ps.streams) < limit) {
		best = newPooledStream(target)
		if start(best) { // else it has ended already: its waiter learns why
			ps.streams = append(ps.streams, best)
		}
	}
	best.waiting++
	return best
}

// done counts one waiter of s gone.
func (sp *streamPool) done(s *pooledStream) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	s.waiting--
}

// remove takes an ended stream out of the pool, so that no request picks it again; oneShot
// says its peer chose the one-shot protocol.
func (sp *streamPool) remove(s *pooledStream, oneShot bool) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	ps := sp.peers[s.target]
	if ps == nil {
		return
	}
	for i, other := range ps.streams {
		if other == s {
			ps.streams = append(ps.streams[:i], ps.streams[i+1:]...)
			break
		}
	}
	ps.oneShot = ps.oneShot || oneShot
	if len(ps.streams) == 0 && !ps.oneShot {
		delete(sp.peers, s.target)
	}
}

// forget drops what is known of target's protocols once it has no connection left.
func (sp *streamPool) forget(target libp2ppeer.ID) {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if ps := sp.peers[target]; ps != nil {
		ps.oneShot = false
		if len(ps.streams) == 0 {
			delete(sp.peers, target)
		}
	}
}

// pooledExchange sends request to target on a pooled stream, or one-shot to a peer that does
// not speak the pooled protocol. A request queued on a stream that closed idle or fell back
// before taking it was never written: it is picked again, on a fresh stream or one-shot.
func (p *Provider) pooledExchange(ctx context.Context, target libp2ppeer.ID, request []byte) ([]byte, *engine.Outcome) {
	const picks = 3
	for range picks {
		s := p.pool.pick(target, p.cfg.PooledStreams, p.startStream)
		if s == nil {
			return p.oneShot(ctx, target, p.cfg.protocol, request)
		}
		answer, failed, again := s.do(ctx, request)
		p.pool.done(s)
		if !again {
			return answer, failed
		}
	}
	o := transient(CodeStreamReset, "no pooled stream took the request")
	return nil, &o
}
