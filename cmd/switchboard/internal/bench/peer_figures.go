package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
)

// The values of Config.PeerProtocol.
const (
	// PeerOneShot sends each peer message on a stream of its own (the default).
	PeerOneShot = "one-shot"
	// PeerPooled sends peer messages on long-lived framed streams.
	PeerPooled = "pooled"
)

// PeerFigures say how a run's peer messages travelled and how long each send took, from the
// start of the provider's send to the companion's acknowledgement read back (the serve
// processes' switchboard_provider_send_duration_seconds, interpolated within its buckets).
type PeerFigures struct {
	PeerProtocol  string   `json:"peerProtocol,omitempty"`
	PeerRelay     bool     `json:"peerRelay,omitempty"`
	PeerSendP50Ms *float64 `json:"peerSendP50Ms,omitempty"`
	PeerSendP99Ms *float64 `json:"peerSendP99Ms,omitempty"`
}

// Bucket is one cumulative bucket of a Prometheus histogram: Count observations at most
// UpperBound (math.Inf(1) for the last).
type Bucket struct {
	UpperBound float64
	Count      float64
}

// peerFigures reads the send durations of a peer run from the stack.
func peerFigures(ctx context.Context, cfg Config, stack *Stack) PeerFigures {
	f := PeerFigures{PeerProtocol: cfg.peerProtocol(), PeerRelay: cfg.PeerRelay}
	if stack.Histogram == nil {
		return f
	}
	buckets, err := stack.Histogram(ctx, "switchboard_provider_send_duration_seconds")
	if err != nil || len(buckets) == 0 {
		return f
	}
	p50, p99 := quantile(buckets, 0.50)*1000, quantile(buckets, 0.99)*1000
	p50, p99 = math.Round(p50*100)/100, math.Round(p99*100)/100
	f.PeerSendP50Ms, f.PeerSendP99Ms = &p50, &p99
	return f
}

// quantile estimates the q-quantile of a histogram by linear interpolation within the bucket
// that holds it, as Prometheus's histogram_quantile does; a quantile in the +Inf bucket is
// the largest finite bound.
func quantile(buckets []Bucket, q float64) float64 {
	sort.Slice(buckets, func(i, j int) bool { return buckets[i].UpperBound < buckets[j].UpperBound })
	total := buckets[len(buckets)-1].Count
	if total == 0 {
		return 0
	}
	rank := q * total
	lower, below := 0.0, 0.0
	for _, b := range buckets {
		if b.Count >= rank {
			if math.IsInf(b.UpperBound, 1) {
				return lower
			}
			if b.Count == below {
				return b.UpperBound
			}
			return lower + (b.UpperBound-lower)*(rank-below)/(b.Count-below)
		}
		lower, below = b.UpperBound, b.Count
	}
	return lower
}

// writeLine prints the peer figures of a peer run.
func (f PeerFigures) writeLine(w io.Writer) {
	if f.PeerProtocol == "" {
		return
	}
	route := "direct"
	if f.PeerRelay {
		route = "through a circuit relay"
	}
	fmt.Fprintf(w, "peer transport\t%s, %s\n", f.PeerProtocol, route)
	if f.PeerSendP50Ms != nil {
		fmt.Fprintf(w, "peer send\tp50 %.2f ms, p99 %.2f ms (send to acknowledgement)\n", *f.PeerSendP50Ms, *f.PeerSendP99Ms)
	}
}
