package api

import (
	"sync"

	"switchboard/engine/auth"
)

// maxPseudonyms bounds the memo of caller pseudonyms; when it is full it starts again empty.
const maxPseudonyms = 10000

// pseudonymMemo remembers the pseudonym of each caller key (see auth.CallerKey). A pseudonym is
// an HMAC of the key, the same every time, and every authenticated request needs one: the memo
// turns that HMAC (two hash states and a handful of allocations) into a map read for callers
// seen before. It is safe for concurrent use.
type pseudonymMemo struct {
	key []byte

	mu    sync.RWMutex
	names map[string]string
}

func newPseudonymMemo(key []byte) *pseudonymMemo {
	return &pseudonymMemo{key: key, names: make(map[string]string)}
}

// caller returns auth.Pseudonym(key, auth.KindCaller, callerKey).
func (m *pseudonymMemo) caller(callerKey string) string {
	m.mu.RLock()
	name, ok := m.names[callerKey]
	m.mu.RUnlock()
	if ok {
		return name
	}
	name = auth.Pseudonym(m.key, auth.KindCaller, callerKey)
	m.mu.Lock()
	if len(m.names) >= maxPseudonyms {
		clear(m.names)
	}
	m.names[callerKey] = name
	m.mu.Unlock()
	return name
}
