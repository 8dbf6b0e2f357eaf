package engine

import (
	"testing"
	"time"

	"switchboard/packages"
)

func TestBackoffSchedule(t *testing.T) {
	t.Parallel()
	policy := packages.RetryPolicy{MaximumAttempts: 10, InitialDelaySeconds: 30, MaximumDelaySeconds: 3600}
	tests := []struct {
		name       string
		n          int
		retryAfter time.Duration
		jitter     float64
		want       time.Duration
	}{
		{"first retry, no jitter draw", 1, 0, 0, 15 * time.Second},
		{"first retry, middle jitter draw", 1, 0, 0.5, 22500 * time.Millisecond},
		{"second doubles", 2, 0, 0, 30 * time.Second},
		{"third doubles again", 3, 0, 0.5, 90 * time.Second},
		{"capped at the maximum", 12, 0, 0.5, 45 * time.Minute},
		{"cap holds for large n", 60, 0, 0, 30 * time.Minute},
		{"retry-after raises the delay", 1, 10 * time.Minute, 0, 10 * time.Minute},
		{"retry-after below the delay changes nothing", 3, time.Second, 0, 60 * time.Second},
		{"retry-after is capped", 1, 5 * time.Hour, 0, time.Hour},
		{"n below one counts as one", 0, 0, 0, 15 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Backoff(policy, tt.n, tt.retryAfter, tt.jitter)
			if got != tt.want {
				t.Fatalf("Backoff(n=%d, retryAfter=%s, jitter=%v) = %s, want %s", tt.n, tt.retryAfter, tt.jitter, got, tt.want)
			}
		})
	}
}

func TestBackoffJitterStaysWithinHalf(t *testing.T) {
	t.Parallel()
	policy := packages.RetryPolicy{MaximumAttempts: 5, InitialDelaySeconds: 8, MaximumDelaySeconds: 60}
	for i := 0; i < 100; i++ {
		r := float64(i) / 100
		got := Backoff(policy, 2, 0, r)
		if got < 8*time.Second || got > 16*time.Second {
			t.Fatalf("jitter %v gave %s, outside [8s, 16s]", r, got)
		}
	}
}
