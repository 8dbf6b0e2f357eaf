package bench

import (
	"math"
	"testing"
)

func TestQuantile(t *testing.T) {
	t.Parallel()
	buckets := []Bucket{{0.001, 10}, {0.002, 50}, {0.004, 90}, {0.008, 100}, {math.Inf(1), 100}}
	for _, tc := range []struct{ q, want float64 }{
		{0.05, 0.0005}, // halfway into the first bucket, from 0
		{0.30, 0.0015}, // halfway from 10 to 50
		{0.99, 0.0076}, // 99 of 90..100 within 0.004..0.008
		{1.00, 0.008},  // the last finite bound
	} {
		if got := quantile(buckets, tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("q %v: %v, want %v", tc.q, got, tc.want)
		}
	}
	over := []Bucket{{0.001, 0}, {math.Inf(1), 4}}
	if got := quantile(over, 0.5); got != 0.001 {
		t.Errorf("a quantile beyond the finite buckets: %v, want the largest bound", got)
	}
	if got := quantile([]Bucket{{math.Inf(1), 0}}, 0.5); got != 0 {
		t.Errorf("empty histogram: %v", got)
	}
}
