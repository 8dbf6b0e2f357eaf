package smtp

import (
	"sync"
	"time"
)

// quitTimeout bounds the goodbye to each pooled connection at Close.
const quitTimeout = time.Second

// pool keeps the connections to one relay between messages. Together with the provider's
// slots it never holds more than ConcurrencyLimit connections: a connection is either held by
// the one conversation that took a slot, or resting here.
type pool struct {
	mu     sync.Mutex
	idle   []*relayConn // most recently used last
	limit  int
	closed bool
}

// take returns the most recently used resting connection that is still fresh at now, closing
// the ones that rested longer than idleTimeout. It returns nil when none is left.
func (p *pool) take(now time.Time, idleTimeout time.Duration) *relayConn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		c := p.idle[len(p.idle)-1]
		p.idle[len(p.idle)-1] = nil
		p.idle = p.idle[:len(p.idle)-1]
		if now.Sub(c.lastUsed) <= idleTimeout {
			return c
		}
		c.close() // a relay drops idle clients; this one has most likely been dropped already
	}
	return nil
}

// put lets c rest for the next message; after Close, or when the pool is full, it closes c
// instead.
func (p *pool) put(c *relayConn, now time.Time) {
	c.lastUsed = now
	p.mu.Lock()
	if p.closed || len(p.idle) >= p.limit {
		p.mu.Unlock()
		c.close()
		return
	}
	p.idle = append(p.idle, c)
	p.mu.Unlock()
}

// close says goodbye to every resting connection and makes later puts do the same. It waits
// for the goodbyes (each bounded by quitTimeout).
func (p *pool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range idle {
		wg.Go(func() { c.quit(quitTimeout) })
	}
	wg.Wait()
}
