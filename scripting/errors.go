package scripting

import (
	"errors"
	"unicode/utf8"
)

// The failure classes (docs/runtime.md, "sandbox"), carried by *Error.
const (
	// ClassFailed: the script threw (including a TypeError from a host helper, a RangeError
	// from a sandbox cap, and call-stack exhaustion), or its top-level code failed in a new
	// runtime.
	ClassFailed = "failed"
	// ClassDeadline: the call was interrupted because its deadline passed or because the
	// caller's context ended (cancelled or past its own deadline). The message says which.
	ClassDeadline = "deadline"
	// ClassOutputInvalid: the result cannot be serialized as JSON (a cycle, a BigInt, nesting
	// deeper than the sandbox allows, a Promise, a toJSON that threw) or, for CallInto, does
	// not decode strictly into the caller's type.
	ClassOutputInvalid = "output-invalid"
	// ClassOutputTooLarge: the serialized result exceeds Limits.OutputBytes for the entry.
	ClassOutputTooLarge = "output-too-large"
)

// Sentinel errors for refusals that are not script failures (ClassOf returns "" for them).
var (
	// ErrInvalidScript wraps every reason Compile refuses a script: too large, a syntax error,
	// a BigInt literal, top-level code that throws or times out, a missing required entry
	// point, an entry point that is not a function, or invalid limits or entry names.
	ErrInvalidScript = errors.New("invalid script")
	// ErrNoEntry is returned by Call for an entry point that was not declared to Compile or
	// that the script does not define (check Has first for optional entry points).
	ErrNoEntry = errors.New("no such entry point")
	// ErrClosed is returned by Call after Close.
	ErrClosed = errors.New("program closed")
	// ErrInput is returned by Call when an argument cannot be passed to the script (an
	// unsupported type, nesting deeper than the sandbox allows, an invalid json.Number).
	ErrInput = errors.New("script input refused")
)

// Error is a script failure. Class is one of the Class constants. Message is meant to be safe
// to log: it is truncated to 512 bytes, the sandbox's own text never quotes the input, and
// every string value of the input (6 bytes or longer; map keys are not redacted) that the
// engine or the script put into it is replaced with "[input]". A fragment of an input string that a script
// sliced out and threw is not recognised.
type Error struct {
	Entry, Class, Message string
}

// Error formats the failure as "script ENTRY: CLASS: MESSAGE".
func (e *Error) Error() string {
	return "script " + e.Entry + ": " + e.Class + ": " + e.Message
}

// ClassOf returns the failure class of err when err is (or wraps) a script *Error, and ""
// otherwise (nil, ErrNoEntry, ErrClosed, ErrInput, a context error, ...).
func ClassOf(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Class
	}
	return ""
}

// maxMessageBytes caps Error.Message.
const maxMessageBytes = 512

// newError builds a script error with a truncated message.
func newError(entry, class, message string) *Error {
	return &Error{Entry: entry, Class: class, Message: truncate(message, maxMessageBytes)}
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}
