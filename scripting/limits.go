package scripting

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Limits are the sandbox limits of SPEC 3.3. DefaultLimits returns the maxima; a runtime file
// may lower them (Lower), never raise them: Compile applies DefaultLimits().Lower(limits), so a
// zero field means "the default" and no field can exceed its default.
type Limits struct {
	// SourceBytes caps the size of the script source (64 KiB).
	SourceBytes int
	// CallStackFrames caps the JavaScript call depth (1000); deeper recursion fails the call.
	// It also bounds the nesting depth the built-ins walk on the script's behalf
	// (Array.prototype.join over nested arrays, Array.prototype.flat).
	CallStackFrames int
	// StringBytes caps the length, in UTF-16 code units (bytes for ASCII text), of a string one
	// built-in call may create: String.prototype.repeat, padStart, padEnd, concat, replace,
	// replaceAll, String.raw, Array.prototype.join and toString, JSON.stringify and the
	// encoding helpers (1 MiB). Strings built by the + operator in a loop are bounded by the
	// deadline only.
	StringBytes int
	// ArrayLength caps the length of an array (or array-like) that one built-in call may walk
	// or create: every Array.prototype method, Array.from, Function.prototype.apply,
	// Reflect.apply and Reflect.construct, and the steps of one array iterator (spread,
	// for-of, destructuring). `new Array(n)` and `a.length = n` allocate nothing in goja (the
	// array stays sparse) and are therefore allowed; the first built-in to walk such an array
	// throws a RangeError. Built-ins cannot be interrupted by the deadline, and goja walks
	// about half a million elements a second in its slowest paths (a spread over a sparse
	// array, measured on a loaded 2-core machine), so the default of 65536 (1<<16) bounds
	// such a walk to roughly 150 ms while still holding every character of a 64 KiB SMS
	// text split into an array.
	ArrayLength int
	// Deadlines is the wall-clock time one call of each entry point may take (prepare 200 ms,
	// interpret 200 ms, receipt and callback 100 ms). An entry point missing from the map uses the key ""
	// when present, else 100 ms (DefaultLimits sets "" to 100 ms). Running the script's top-level code in a new runtime may take
	// the largest of these.
	Deadlines map[string]time.Duration
	// OutputBytes caps the serialized JSON result of each entry point (prepare 1 MiB, interpret
	// and receipt 64 KiB, callback 1 MiB: its inbound items carry texts of up to 64 KiB). An entry point missing from the map uses the key "" when present,
	// else 64 KiB (DefaultLimits sets "" to 64 KiB).
	OutputBytes map[string]int
	// RuntimeUses retires a pooled runtime after this many calls (10000), so that what goja
	// accumulates in a runtime from call to call (its Symbol.for registry, its caches) cannot
	// grow for ever. No state of the script survives a call (see Program.Call).
	RuntimeUses int
}

const (
	fallbackDeadline    = 100 * time.Millisecond
	fallbackOutputBytes = 64 << 10
)

// DefaultLimits returns the limits of SPEC 3.3, which are also the highest a runtime file
// may configure. Each call returns fresh maps.
func DefaultLimits() Limits {
	return Limits{
		SourceBytes:     64 << 10,
		CallStackFrames: 1000,
		StringBytes:     1 << 20,
		ArrayLength:     1 << 16,
		Deadlines: map[string]time.Duration{
			"prepare":   200 * time.Millisecond,
			"interpret": 200 * time.Millisecond,
			"receipt":   100 * time.Millisecond,
			"callback":  100 * time.Millisecond,
			"":          fallbackDeadline,
		},
		OutputBytes: map[string]int{
			"prepare":   1 << 20,
			"interpret": 64 << 10,
			"receipt":   64 << 10,
			"callback":  1 << 20,
			"":          fallbackOutputBytes,
		},
		RuntimeUses: 10000,
	}
}

// Lower returns the field-wise minimum of l and o, where zero (or negative) values count as
// unset. For the per-entry maps, every key of either map gets the minimum of both sides'
// values for that entry, each side answering for an entry it does not name with its "" key
// (when it has one). Neither l nor o is modified. DefaultLimits().Lower(o) is therefore never
// above the defaults, for any entry.
func (l Limits) Lower(o Limits) Limits {
	out := Limits{
		SourceBytes:     minSet(l.SourceBytes, o.SourceBytes),
		CallStackFrames: minSet(l.CallStackFrames, o.CallStackFrames),
		StringBytes:     minSet(l.StringBytes, o.StringBytes),
		ArrayLength:     minSet(l.ArrayLength, o.ArrayLength),
		RuntimeUses:     minSet(l.RuntimeUses, o.RuntimeUses),
		Deadlines:       lowerMap(l.Deadlines, o.Deadlines),
		OutputBytes:     lowerMap(l.OutputBytes, o.OutputBytes),
	}
	return out
}

// lowerMap is Lower for one per-entry map; nil when both are empty.
func lowerMap[T int | time.Duration](a, b map[string]T) map[string]T {
	if len(a)+len(b) == 0 {
		return nil
	}
	out := make(map[string]T, len(a)+len(b))
	for _, m := range []map[string]T{a, b} {
		for entry := range m {
			if v := minSet(explicit(a, entry), explicit(b, entry)); v > 0 {
				out[entry] = v
			}
		}
	}
	return out
}

// explicit is the value a per-entry map gives entry: its own, else the "" key's, else 0.
func explicit[T int | time.Duration](m map[string]T, entry string) T {
	if v := m[entry]; v > 0 {
		return v
	}
	return max(m[""], 0)
}

// deadline is the deadline of one call of entry.
func (l Limits) deadline(entry string) time.Duration {
	if d := explicit(l.Deadlines, entry); d > 0 {
		return d
	}
	return fallbackDeadline
}

// outputBytes is the serialized output cap of entry.
func (l Limits) outputBytes(entry string) int {
	if n := explicit(l.OutputBytes, entry); n > 0 {
		return n
	}
	return fallbackOutputBytes
}

// loadDeadline bounds the script's top-level code in a new runtime: the largest entry deadline.
func (l Limits) loadDeadline() time.Duration {
	d := l.deadline("")
	for entry := range l.Deadlines {
		d = max(d, l.deadline(entry))
	}
	return d
}

// validate refuses negative values, which are configuration mistakes rather than "unset".
func (l Limits) validate() error {
	var errs []error
	for _, f := range []struct {
		name  string
		value int
	}{
		{"SourceBytes", l.SourceBytes}, {"CallStackFrames", l.CallStackFrames},
		{"StringBytes", l.StringBytes}, {"ArrayLength", l.ArrayLength}, {"RuntimeUses", l.RuntimeUses},
	} {
		if f.value < 0 {
			errs = append(errs, fmt.Errorf("%s is negative (%d)", f.name, f.value))
		}
	}
	for _, entry := range slices.Sorted(maps.Keys(l.Deadlines)) {
		if d := l.Deadlines[entry]; d < 0 {
			errs = append(errs, fmt.Errorf("deadline of %q is negative (%s)", entry, d))
		}
	}
	for _, entry := range slices.Sorted(maps.Keys(l.OutputBytes)) {
		if n := l.OutputBytes[entry]; n < 0 {
			errs = append(errs, fmt.Errorf("output bytes of %q is negative (%d)", entry, n))
		}
	}
	return errors.Join(errs...)
}

// minSet is the smaller of two values, ignoring values that are not positive.
func minSet[T int | time.Duration](a, b T) T {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	default:
		return min(a, b)
	}
}
