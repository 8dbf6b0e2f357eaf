package httpgw

import (
	"container/heap"
	"sync"
	"time"
)

// replayCache remembers keys until a given time, bounded in size. When it is full of keys that
// are all still live it refuses new ones (fail closed): only verified requests are added, so
// only the provider itself can fill it, and a refused callback is retried by the sender later.
type replayCache struct {
	mu       sync.Mutex
	capacity int
	until    map[string]time.Time
	order    expiryHeap
}

func newReplayCache(capacity int) *replayCache {
	return &replayCache{capacity: capacity, until: make(map[string]time.Time)}
}

// add records key until forgetAt and reports true, or reports false when key is already
// remembered at now or the cache is full.
func (c *replayCache) add(key string, forgetAt, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.order) > 0 && !c.order[0].at.After(now) {
		e := heap.Pop(&c.order).(expiry)
		if at, ok := c.until[e.key]; ok && !at.After(now) {
			delete(c.until, e.key)
		}
	}
	if at, ok := c.until[key]; ok && at.After(now) {
		return false
	}
	if len(c.until) >= c.capacity {
		return false
	}
	c.until[key] = forgetAt
	heap.Push(&c.order, expiry{key: key, at: forgetAt})
	return true
}

// size returns how many keys are remembered.
func (c *replayCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.until)
}

type expiry struct {
	key string
	at  time.Time
}

// expiryHeap is a min-heap of expiries by time (container/heap).
type expiryHeap []expiry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h expiryHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *expiryHeap) Push(x any)        { *h = append(*h, x.(expiry)) }
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
