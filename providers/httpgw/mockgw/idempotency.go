package mockgw

import "slices"

// keyLedger remembers the Idempotency-Key values the gateway took messages under. It is
// guarded by the gateway's lock.
type keyLedger struct {
	// first maps a key to the gateway reference its first take was answered with.
	first map[string]string
	// byReference maps a message reference to the distinct keys it was taken under, in the
	// order of their first take.
	byReference map[string][]string
}

func newKeyLedger() keyLedger {
	return keyLedger{first: map[string]string{}, byReference: map[string][]string{}}
}

// replay returns the gateway reference of key's first take, if key is not empty and was taken.
func (l keyLedger) replay(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	ref, ok := l.first[key]
	return ref, ok
}

// record notes that reference was taken under key and answered with ref; an empty key (a
// request without the header) leaves no trace.
func (l keyLedger) record(reference, key, ref string) {
	if key == "" {
		return
	}
	if _, ok := l.first[key]; !ok {
		l.first[key] = ref
	}
	if !slices.Contains(l.byReference[reference], key) {
		l.byReference[reference] = append(l.byReference[reference], key)
	}
}

// Keys returns the distinct Idempotency-Key values under which the gateway took a message with
// this reference, in the order of their first take. A take without the header adds none, and a
// replay (IdempotencyKeys) is not a take, so one key here and Seen of 1 mean the message was
// taken exactly once.
func (g *Gateway) Keys(reference string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.keys.byReference[reference])
}
