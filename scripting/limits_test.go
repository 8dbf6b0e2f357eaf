package scripting

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestDefaultLimitsAreTheSpecMaxima(t *testing.T) {
	t.Parallel()
	l := DefaultLimits()
	if l.SourceBytes != 64<<10 || l.CallStackFrames != 1000 || l.StringBytes != 1<<20 {
		t.Errorf("scalar limits = %+v", l)
	}
	for entry, want := range map[string]time.Duration{"prepare": 200 * time.Millisecond, "interpret": 200 * time.Millisecond, "receipt": 100 * time.Millisecond} {
		if got := l.deadline(entry); got != want {
			t.Errorf("deadline(%s) = %s, want %s", entry, got, want)
		}
	}
	for entry, want := range map[string]int{"prepare": 1 << 20, "interpret": 64 << 10, "receipt": 64 << 10} {
		if got := l.outputBytes(entry); got != want {
			t.Errorf("outputBytes(%s) = %d, want %d", entry, got, want)
		}
	}
	// Fresh maps each time: changing one result cannot change the defaults.
	l.Deadlines["prepare"] = time.Hour
	if DefaultLimits().deadline("prepare") != 200*time.Millisecond {
		t.Error("DefaultLimits shares its maps")
	}
}

func TestLowerTakesTheMinimumAndNeverRaises(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		lower Limits
		check func(t *testing.T, got Limits)
	}{
		{
			name:  "zero lowers nothing",
			lower: Limits{},
			check: func(t *testing.T, got Limits) {
				if !reflect.DeepEqual(got, DefaultLimits()) {
					t.Errorf("got %+v", got)
				}
			},
		},
		{
			name:  "scalars take the smaller value",
			lower: Limits{SourceBytes: 1000, StringBytes: 2 << 20, ArrayLength: 10, RuntimeUses: 5, CallStackFrames: -1},
			check: func(t *testing.T, got Limits) {
				if got.SourceBytes != 1000 || got.StringBytes != 1<<20 || got.ArrayLength != 10 || got.RuntimeUses != 5 || got.CallStackFrames != 1000 {
					t.Errorf("got %+v", got)
				}
			},
		},
		{
			name:  "one entry lowered, the others kept",
			lower: Limits{Deadlines: map[string]time.Duration{"interpret": 20 * time.Millisecond}},
			check: func(t *testing.T, got Limits) {
				if got.deadline("interpret") != 20*time.Millisecond || got.deadline("prepare") != 200*time.Millisecond || got.deadline("receipt") != 100*time.Millisecond {
					t.Errorf("got %v", got.Deadlines)
				}
			},
		},
		{
			name:  "an entry above the default is cut to the default",
			lower: Limits{Deadlines: map[string]time.Duration{"prepare": time.Hour}, OutputBytes: map[string]int{"receipt": 1 << 30}},
			check: func(t *testing.T, got Limits) {
				if got.deadline("prepare") != 200*time.Millisecond || got.outputBytes("receipt") != 64<<10 {
					t.Errorf("got %v %v", got.Deadlines, got.OutputBytes)
				}
			},
		},
		{
			name:  "an unknown entry gets at most the catch-all default",
			lower: Limits{Deadlines: map[string]time.Duration{"custom": time.Hour}, OutputBytes: map[string]int{"custom": 1 << 30}},
			check: func(t *testing.T, got Limits) {
				if got.deadline("custom") != fallbackDeadline || got.outputBytes("custom") != fallbackOutputBytes {
					t.Errorf("got %v %v", got.Deadlines, got.OutputBytes)
				}
			},
		},
		{
			name:  "the lowering catch-all applies to every entry",
			lower: Limits{Deadlines: map[string]time.Duration{"": 10 * time.Millisecond}},
			check: func(t *testing.T, got Limits) {
				for _, entry := range []string{"prepare", "interpret", "receipt", "other"} {
					if got.deadline(entry) != 10*time.Millisecond {
						t.Errorf("deadline(%s) = %s", entry, got.deadline(entry))
					}
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.check(t, DefaultLimits().Lower(tt.lower))
		})
	}
}

func TestLowerIsIdempotent(t *testing.T) {
	t.Parallel()
	o := Limits{StringBytes: 1000, Deadlines: map[string]time.Duration{"receipt": time.Millisecond}}
	once := DefaultLimits().Lower(o)
	twice := DefaultLimits().Lower(once)
	if !reflect.DeepEqual(once, twice) {
		t.Errorf("once %+v\ntwice %+v", once, twice)
	}
}

func TestLoadDeadlineIsTheLargestEntryDeadline(t *testing.T) {
	t.Parallel()
	if got := DefaultLimits().loadDeadline(); got != 200*time.Millisecond {
		t.Errorf("loadDeadline = %s", got)
	}
	if got := (Limits{}).loadDeadline(); got != fallbackDeadline {
		t.Errorf("loadDeadline of zero limits = %s", got)
	}
}

func TestCompileRefusesNegativeLimits(t *testing.T) {
	t.Parallel()
	_, err := Compile("neg.js", "function f(){}", []string{"f"}, nil,
		Limits{StringBytes: -1, OutputBytes: map[string]int{"f": -5}}, nil)
	if !errors.Is(err, ErrInvalidScript) || !strings.Contains(err.Error(), "StringBytes is negative") || !strings.Contains(err.Error(), `"f"`) {
		t.Fatalf("err = %v", err)
	}
}
