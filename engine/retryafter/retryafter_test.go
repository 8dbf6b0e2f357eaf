package retryafter

import (
	"testing"
	"time"
)

func TestParseReadsSecondsAndDates(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	cases := map[string]time.Duration{
		"": 0, "0": 0, "1": time.Second, " 30 ": 30 * time.Second, "1.5": 0,
		"Sun, 01 Mar 2026 12:00:10 GMT":  10 * time.Second,
		"Sunday, 01-Mar-26 12:01:00 GMT": time.Minute,
		"Sun Mar  1 12:00:05 2026":       5 * time.Second,
		"Sun, 01 Mar 2026 11:00:00 GMT":  0,
		"99999999999":                    Max,
		"Tue, 10 Mar 2026 12:00:00 GMT":  Max,
	}
	for in, want := range cases {
		if got := Parse(in, now); got != want {
			t.Errorf("Parse(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestSecondsCapsAtMax(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]time.Duration{0: 0, 1.5: 1500 * time.Millisecond, 86400: Max, 1e12: Max} {
		if got := Seconds(in); got != want {
			t.Errorf("Seconds(%v) = %v, want %v", in, got, want)
		}
	}
}
