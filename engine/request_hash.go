package engine

import (
	"bytes"
	"crypto/sha256"
	"slices"
	"unicode/utf8"

	"switchboard/packages/jsonread"
)

// RequestHash is the SHA-256 of a request body written canonically (members sorted by name, no
// insignificant white space, numbers as written), so formatting does not matter but every value
// does. body is the body as the API read it (strictly: no repeated names, valid UTF-8).
//
// The canonical form is what encoding/json gives when it marshals the body decoded into an any
// with UseNumber: members sorted by their decoded names, strings escaped as json.Marshal escapes
// them (HTML characters, U+2028 and U+2029 included). Stored idempotency records hold hashes of
// that form, so it must never change. It is written straight from the index, without building
// the decoded value.
func RequestHash(body *jsonread.Doc) []byte {
	c := canonicalWriter{members: make([]member, 0, 16)}
	sum := sha256.Sum256(c.write(make([]byte, 0, body.End()), body.Root()))
	return sum[:]
}

// member is an object member being sorted: its decoded name and its value.
type member struct {
	name []byte
	val  jsonread.Value
}

// canonicalWriter writes the canonical form of an indexed document, sorting members object by
// object, so its cost is linear in the body (plus the sorts) however the body is nested.
type canonicalWriter struct {
	members []member // a stack: each object being written sorts its own run at the top
}

// write appends the canonical form of v.
func (c *canonicalWriter) write(out []byte, v jsonread.Value) []byte {
	switch v.Kind() {
	case jsonread.String:
		return appendCanonicalString(out, v)
	case jsonread.Array:
		out = append(out, '[')
		first := true
		v.Elements(func(e jsonread.Value) bool {
			if !first {
				out = append(out, ',')
			}
			first = false
			out = c.write(out, e)
			return true
		})
		return append(out, ']')
	case jsonread.Object:
		return c.writeObject(out, v)
	}
	return append(out, v.Raw()...)
}

// writeObject appends an object with its members sorted by name. Names are unique: the reader
// refuses a body that repeats one.
func (c *canonicalWriter) writeObject(out []byte, v jsonread.Value) []byte {
	base := len(c.members)
	v.Members(func(name, val jsonread.Value) bool {
		c.members = append(c.members, member{name: name.Bytes(), val: val})
		return true
	})
	top := len(c.members)
	slices.SortFunc(c.members[base:top], func(a, b member) int { return bytes.Compare(a.name, b.name) })
	out = append(out, '{')
	for m := base; m < top; m++ {
		if m > base {
			out = append(out, ',')
		}
		out = appendJSONString(out, c.members[m].name)
		out = append(out, ':')
		out = c.write(out, c.members[m].val)
	}
	c.members = c.members[:base]
	return append(out, '}')
}

// appendCanonicalString appends a string as json.Marshal writes its decoded text. A token of
// printable ASCII without escapes or HTML characters is already in that form.
func appendCanonicalString(out []byte, v jsonread.Value) []byte {
	raw := v.Raw()
	for _, b := range raw[1 : len(raw)-1] {
		if !htmlSafe(b) {
			return appendJSONString(out, v.Bytes())
		}
	}
	return append(out, raw...)
}

// htmlSafe reports whether json.Marshal writes an ASCII byte as it is: printable ASCII and DEL,
// except the quote, the backslash and the HTML characters <, > and &.
func htmlSafe(b byte) bool {
	return b >= 0x20 && b < utf8.RuneSelf && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
}

const lowerHex = "0123456789abcdef"

// appendJSONString appends s quoted exactly as json.Marshal quotes a string (with HTML
// escaping, which Marshal always applies).
func appendJSONString(out, s []byte) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if htmlSafe(b) {
				i++
				continue
			}
			out = append(out, s[start:i]...)
			switch b {
			case '\\', '"':
				out = append(out, '\\', b)
			case '\b':
				out = append(out, '\\', 'b')
			case '\f':
				out = append(out, '\\', 'f')
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', lowerHex[b>>4], lowerHex[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			out = append(out, s[start:i]...)
			out = append(out, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			out = append(out, s[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', lowerHex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	out = append(out, s[start:]...)
	return append(out, '"')
}
