package api

import (
	"errors"
	"time"
	"unicode"
	"unicode/utf8"

	"switchboard/engine"
	"switchboard/packages/jsonread"
)

// The members of a request body are read from the index by hand, by their exact names (no case
// folding), each object closed: a member it does not know is refused. A null member counts as
// absent. Problems name members by their path in the body (to.phone); a member the body names
// itself is named only when it is a plain identifier (jsonread.PlainName), so that no answer
// repeats what was sent (docs/api.md).

// Causes of request.invalid problems, kept in Problem.Err for tests and logs.
var (
	errUnknownMember = errors.New("unknown member")
	errMemberType    = errors.New("member of the wrong type")
	errCorrelationID = errors.New("correlationId out of bounds")
	// errContentData: content.data is not an object (encoding/json would keep any value).
	errContentData = errors.New("content.data is not an object")
)

// memberPath joins a parent path and a member name the API defines.
func memberPath(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// invalid is a request.invalid problem with a caller-safe detail and a cause.
func invalid(detail string, cause error) error {
	return &engine.Problem{Code: engine.CodeRequestInvalid, Detail: detail, Err: cause}
}

// members calls f with each member of the object v, which is at path at ("" for the body); f
// returns unknownMember for a name it does not know. A null v is an object without members.
func members(v jsonread.Value, at string, f func(name, val jsonread.Value) error) error {
	switch v.Kind() {
	case jsonread.Null:
		return nil
	case jsonread.Object:
	default:
		if at == "" {
			return invalid("the body must be a JSON object", errMemberType)
		}
		return invalid("member "+at+" must be an object", errMemberType)
	}
	var err error
	v.Members(func(name, val jsonread.Value) bool {
		err = f(name, val)
		return err == nil
	})
	return err
}

// unknownMember refuses member name of the object at path at.
func unknownMember(at string, name jsonread.Value) error {
	if n := name.Text(); jsonread.PlainName(n) {
		return invalid("unknown member "+memberPath(at, n), errUnknownMember)
	}
	if at == "" {
		return invalid("the body has an unknown member (its name is not a plain identifier, so it is not repeated)", errUnknownMember)
	}
	return invalid("member "+at+" has an unknown member (its name is not a plain identifier, so it is not repeated)", errUnknownMember)
}

// stringMember sets *dst to the string v at path at; null leaves it empty.
func stringMember(at string, v jsonread.Value, dst *string) error {
	switch v.Kind() {
	case jsonread.String:
		*dst = v.Text()
	case jsonread.Null:
	default:
		return invalid("member "+at+" must be a string", errMemberType)
	}
	return nil
}

// boolMember sets *dst to the boolean v at path at; null leaves it false.
func boolMember(at string, v jsonread.Value, dst *bool) error {
	switch v.Kind() {
	case jsonread.Bool:
		*dst = v.Bool()
	case jsonread.Null:
	default:
		return invalid("member "+at+" must be true or false", errMemberType)
	}
	return nil
}

// timeMember sets *dst to the RFC 3339 time v at path at, read as encoding/json reads a
// time.Time (the string as written, escapes included); null leaves it nil.
func timeMember(at string, v jsonread.Value, dst **time.Time) error {
	switch v.Kind() {
	case jsonread.Null:
		return nil
	case jsonread.String:
	default:
		return invalid("member "+at+" must be an RFC 3339 time string", errMemberType)
	}
	t := new(time.Time)
	if err := t.UnmarshalJSON(v.Raw()); err != nil {
		return invalid("member "+at+" is not an RFC 3339 time", errMemberType)
	}
	*dst = t
	return nil
}

// maxCorrelationID bounds a correlationId, in characters.
const maxCorrelationID = 128

// validCorrelationID reports whether s is 1 to 128 printable characters (letters, marks,
// numbers, punctuation, symbols and the ASCII space): no control or formatting characters, no
// other spaces.
func validCorrelationID(s string) bool {
	if s == "" || len(s) > maxCorrelationID*utf8.UTFMax {
		return false
	}
	n := 0
	for _, r := range s {
		if n++; n > maxCorrelationID || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
