package auth

import (
	"sync"
	"time"
)

// defaultCacheEntries bounds the verified-token cache: at 10,000 tokens of ~1 KiB principal data
// it stays around a few MiB.
const defaultCacheEntries = 10000

// tokenCache remembers verified tokens by the SHA-256 of their raw text until they expire. It is
// bounded: when full it drops expired entries first, then an arbitrary tenth of the rest. It is
// safe for concurrent use.
type tokenCache struct {
	max int // 0 disables the cache

	mu      sync.RWMutex
	entries map[[32]byte]cacheEntry
}

type cacheEntry struct {
	p     *Principal
	until time.Time // exp plus the leeway; the entry is dead from this instant
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, entries: make(map[[32]byte]cacheEntry)}
}

// get returns a copy of the cached principal while the entry is alive; a dead entry is dropped.
func (c *tokenCache) get(key [32]byte, now time.Time) (*Principal, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok {
		return nil, false
	}
	if !now.Before(e.until) {
		c.mu.Lock()
		if cur, ok := c.entries[key]; ok && cur.p == e.p {
			delete(c.entries, key)
		}
		c.mu.Unlock()
		return nil, false
	}
	p := *e.p
	return &p, true
}

// put stores a principal until the instant until.
func (c *tokenCache) put(key [32]byte, p *Principal, until, now time.Time) {
	if c.max <= 0 || !now.Before(until) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok && len(c.entries) >= c.max {
		c.evictLocked(now)
	}
	c.entries[key] = cacheEntry{p: p, until: until}
}

// evictLocked drops every dead entry and, if that frees nothing, an arbitrary tenth of the
// entries (map iteration order is unspecified, so this is close to random eviction).
func (c *tokenCache) evictLocked(now time.Time) {
	for k, e := range c.entries {
		if !now.Before(e.until) {
			delete(c.entries, k)
		}
	}
	if len(c.entries) < c.max {
		return
	}
	n := c.max/10 + 1
	for k := range c.entries {
		delete(c.entries, k)
		if n--; n == 0 {
			return
		}
	}
}

// size returns the number of entries, dead or alive.
func (c *tokenCache) size() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.entries)
}
