package peer

import (
	"encoding/json"
	"sync"
	"time"

	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
	"golang.org/x/time/rate"
)

// Codes of the refusals the inbox answers with ({"accepted": false, "code": …}).
const (
	// CodeNotAllowed: the sender is not among Config.AllowedPeers.
	CodeNotAllowed = "peer.not-allowed"
	// CodeOverQuota: the sender is over its MessagesPerMinute or BytesPerDay.
	CodeOverQuota = "peer.over-quota"
)

// refusal is the answer to an envelope the inbox does not take.
func refusal(code string) []byte {
	b, _ := json.Marshal(struct {
		Accepted bool   `json:"accepted"`
		Code     string `json:"code"`
	}{false, code})
	return b
}

// allows reports whether the inbox takes envelopes from id.
func (r *resolved) allows(id libp2ppeer.ID) bool { return r.AnyPeer || r.allowed[id] }

// maxSenderBuckets is how many senders' buckets are kept before the full ones (which a fresh
// bucket would equal) are dropped.
const maxSenderBuckets = 4096

// senderBuckets holds each sender's per-minute allowance: a token bucket refilled at
// perMinute a minute that holds a minute's worth, so a sender may send a minute's envelopes at
// once, then perMinute/60 a second.
type senderBuckets struct {
	perMinute int
	mu        sync.Mutex
	buckets   map[libp2ppeer.ID]*rate.Limiter
}

func newSenderBuckets(perMinute int) *senderBuckets {
	return &senderBuckets{perMinute: perMinute, buckets: map[libp2ppeer.ID]*rate.Limiter{}}
}

// take spends one of id's envelopes at now. ok is false when none is left; otherwise undo gives
// it back (for an envelope that turned out to be a duplicate, or was not stored).
func (s *senderBuckets) take(id libp2ppeer.ID, now time.Time) (ok bool, undo func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[id]
	if b == nil {
		if len(s.buckets) >= maxSenderBuckets {
			s.dropFull(now)
		}
		b = rate.NewLimiter(rate.Limit(float64(s.perMinute)/60), s.perMinute)
		s.buckets[id] = b
	}
	r := b.ReserveN(now, 1)
	if !r.OK() || r.DelayFrom(now) > 0 {
		r.CancelAt(now)
		return false, nil
	}
	return true, func() { r.CancelAt(now) }
}

// dropFull forgets the buckets that are full at now: a fresh bucket is the same. When every
// bucket is in use (more senders than maxSenderBuckets sent within a minute), it forgets them
// all rather than grow without bound, which lets those senders start afresh.
func (s *senderBuckets) dropFull(now time.Time) {
	for id, b := range s.buckets {
		if b.TokensAt(now) >= float64(s.perMinute) {
			delete(s.buckets, id)
		}
	}
	if len(s.buckets) >= maxSenderBuckets {
		clear(s.buckets)
	}
}
