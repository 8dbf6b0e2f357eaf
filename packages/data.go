package packages

import (
	"strconv"

	"switchboard/packages/jsonread"
)

// Template data is read by the one JSON reader, strictly: a repeated member name, invalid UTF-8
// or a lone surrogate escape is refused, as in every request body (docs/api.md). Numbers stay
// json.Number, so that no precision is lost before validation and rendering.

// maxNumberChars bounds a JSON number literal in template data: exact decimal arithmetic (in
// schema checks such as maximum, and in the number function) is quadratic in the digits, and no
// message needs more than 64 characters for a number.
const maxNumberChars = 64

// hiddenName stands for a member name that messages do not repeat (see shownName).
const hiddenName = "*"

// DecodeData reads template data from JSON text (a sample.json, a data file of the command
// line). JSON that is not valid, or not valid strictly, and a number literal longer than 64
// characters give a *DataError.
func DecodeData(raw []byte) (any, error) {
	doc, err := jsonread.Read(raw, jsonread.Strict)
	if err != nil {
		msg := "data is not valid JSON"
		if e, ok := err.(*jsonread.Error); ok {
			msg += ": " + e.Reason.String() + " at byte " + strconv.Itoa(e.Offset)
		}
		return nil, &DataError{Message: msg}
	}
	return DataOf(doc.Root())
}

// DataOf is the template data held by v, a value of a document already read (the data member of
// a request body): plain Go values as DecodeData gives them, and for the zero Value (no data
// member) an empty object. A number literal longer than 64 characters gives a *DataError.
func DataOf(v jsonread.Value) (any, error) {
	if !v.Exists() {
		return map[string]any{}, nil
	}
	if ptr, shown, long := longNumber(v); long {
		if shown == "" {
			shown = "(root)"
		}
		return nil, &DataError{Paths: []string{ptr}, Message: "data has a number longer than 64 characters at " + shown}
	}
	return v.Decode(), nil
}

// longNumber finds the first number literal over maxNumberChars in document order and returns
// its JSON pointer, exact and as shown to a caller. The pointers are built on the way back from
// the number, so that data without one costs no strings.
func longNumber(v jsonread.Value) (ptr, shown string, found bool) {
	switch v.Kind() {
	case jsonread.Number:
		return "", "", len(v.Raw()) > maxNumberChars
	case jsonread.Object:
		v.Members(func(name, val jsonread.Value) bool {
			if ptr, shown, found = longNumber(val); found {
				n := name.Text()
				ptr, shown = "/"+escapePointer(n)+ptr, "/"+shownName(n)+shown
			}
			return !found
		})
	case jsonread.Array:
		i := 0
		v.Elements(func(e jsonread.Value) bool {
			if ptr, shown, found = longNumber(e); found {
				idx := "/" + strconv.Itoa(i)
				ptr, shown = idx+ptr, idx+shown
			}
			i++
			return !found
		})
	}
	return ptr, shown, found
}

// shownName is a member name of the data as a message may repeat it: a plain identifier of at
// most 64 characters as it is, any other name as "*", since it is the sender's text.
func shownName(name string) string {
	if jsonread.PlainName(name) {
		return name
	}
	return hiddenName
}
