package scripting

import "sync"

// pool keeps idle prepared runtimes of one Program. A runtime is either in the pool or held
// by exactly one call, never both. The pool grows on demand (a call that finds it empty
// builds a runtime) and keeps at most max idle ones; extra runtimes returned to a full pool
// are dropped, so a burst does not pin memory for ever.
type pool struct {
	mu     sync.Mutex
	idle   []*sandbox
	max    int
	closed bool
}

// get takes an idle runtime (nil when there is none) and reports whether the pool is closed.
func (q *pool) get() (sb *sandbox, closed bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil, true
	}
	if n := len(q.idle); n > 0 {
		sb = q.idle[n-1]
		q.idle[n-1] = nil
		q.idle = q.idle[:n-1]
	}
	return sb, false
}

// put returns a runtime; it reports false when the runtime was not kept (full or closed).
func (q *pool) put(sb *sandbox) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed || len(q.idle) >= q.max {
		return false
	}
	q.idle = append(q.idle, sb)
	return true
}

// close empties the pool for good and returns the idle runtimes it dropped.
func (q *pool) close() []*sandbox {
	q.mu.Lock()
	defer q.mu.Unlock()
	idle := q.idle
	q.idle, q.closed = nil, true
	return idle
}

// size is the number of idle runtimes.
func (q *pool) size() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.idle)
}
