package runtime

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
)

// Secret is a secret resolved at Load: the reference written in the runtime file
// ("secret:file/NAME" or "secret:env/NAME") and the bytes it pointed to, exactly as stored
// (no trimming: a secret file that ends with a newline holds that newline; Load refuses it
// where a newline cannot work, such as in an HTTP header).
//
// Every way of printing a Secret (String, fmt verbs including %#v and %x, JSON, slog) shows
// the reference, never the value. The zero Secret means "not configured".
type Secret struct {
	ref   string
	value []byte
}

// NewSecret returns a Secret holding value under ref. Load builds every Secret of a runtime;
// NewSecret exists for tests and for callers that build a Runtime by hand.
func NewSecret(ref string, value []byte) Secret {
	return Secret{ref: ref, value: append([]byte(nil), value...)}
}

// Value returns a copy of the secret bytes (nil for the zero Secret). Callers may keep or
// change the copy without affecting the Secret.
func (s Secret) Value() []byte {
	if s.value == nil {
		return nil
	}
	return append([]byte(nil), s.value...)
}

// Ref returns the reference the secret was read from, e.g. "secret:file/sms-token".
func (s Secret) Ref() string { return s.ref }

// IsZero reports whether no secret is configured.
func (s Secret) IsZero() bool { return s.ref == "" && len(s.value) == 0 }

// String returns the reference, never the value.
func (s Secret) String() string { return s.ref }

// GoString returns the reference, never the value, so %#v cannot leak it.
func (s Secret) GoString() string { return "runtime.Secret(" + strconv.Quote(s.ref) + ")" }

// Format prints the reference for every verb (%v, %s, %q, %x, %d, …), never the value.
func (s Secret) Format(f fmt.State, verb rune) {
	switch verb {
	case 'q':
		fmt.Fprint(f, strconv.Quote(s.ref))
	case 'v':
		if f.Flag('#') {
			fmt.Fprint(f, s.GoString())
			return
		}
		fmt.Fprint(f, s.ref)
	default:
		fmt.Fprint(f, s.ref)
	}
}

// MarshalJSON encodes the reference as a JSON string, never the value.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.ref) }

// LogValue logs the reference, never the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.ref) }

var (
	_ fmt.Formatter  = Secret{}
	_ fmt.GoStringer = Secret{}
	_ json.Marshaler = Secret{}
	_ slog.LogValuer = Secret{}
)
