package jsonread

import "strconv"

// Reason is why a document was refused.
type Reason uint8

// The reasons of an Error.
const (
	// Syntax: the text breaks the JSON grammar (or ends inside a value).
	Syntax Reason = iota + 1
	// Empty: the text holds no value at all (nothing but white space).
	Empty
	// Trailing: a whole value is followed by something other than white space.
	Trailing
	// Duplicate: an object names the same member twice (names compare after unescaping).
	Duplicate
	// InvalidUTF8: a string holds bytes that are not UTF-8.
	InvalidUTF8
	// LoneSurrogate: a string escapes half of a UTF-16 surrogate pair (\ud800 alone).
	LoneSurrogate
	// TooDeep: arrays and objects nest deeper than MaxDepth.
	TooDeep
	// TooLarge: the text is longer than the index can address (2 GiB).
	TooLarge
)

var reasonText = [...]string{
	Syntax:        "the text is not valid JSON",
	Empty:         "the text holds no JSON value",
	Trailing:      "the JSON value is followed by more text",
	Duplicate:     "an object repeats a member name",
	InvalidUTF8:   "a string is not valid UTF-8",
	LoneSurrogate: "a string escapes a lone UTF-16 surrogate",
	TooDeep:       "the document nests too deep",
	TooLarge:      "the document is too large",
}

// String describes the reason in words that quote nothing of the document.
func (r Reason) String() string {
	if int(r) < len(reasonText) && reasonText[r] != "" {
		return reasonText[r]
	}
	return "unknown reason " + strconv.Itoa(int(r))
}

// Error is a refused document: why, and the byte offset where reading stopped. Its message
// never holds the document's text, so it may be shown to whoever sent the document.
type Error struct {
	Reason Reason
	Offset int
}

// Error returns "jsonread: REASON at byte OFFSET".
func (e *Error) Error() string {
	return "jsonread: " + e.Reason.String() + " at byte " + strconv.Itoa(e.Offset)
}
