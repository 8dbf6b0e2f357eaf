package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"unicode/utf8"
)

// RequestHash is the SHA-256 of the body re-encoded canonically (sorted keys, no insignificant
// whitespace, numbers as written), so formatting does not matter but every value does.
//
// The canonical form is what encoding/json gives when it marshals the body decoded into an any
// with UseNumber: members sorted by their decoded names, a repeated name keeping its last value,
// strings escaped as json.Marshal escapes them (HTML characters, U+2028 and U+2029 included).
// Stored idempotency records hold hashes of that form, so it must never change. For a body that
// is one JSON value (every body a submission accepts) it is written straight from the bytes,
// without building the decoded value; anything else takes the decoder's path, which hashes the
// first value and refuses a body that does not start with one.
func RequestHash(body []byte) ([]byte, error) {
	x, ok := indexJSON(body)
	if !ok {
		return decodedRequestHash(body)
	}
	c := canonicalWriter{x: x, members: make([]member, 0, 16)}
	sum := sha256.Sum256(c.write(make([]byte, 0, len(body)), 0))
	return sum[:], nil
}

// decodedRequestHash is RequestHash by decoding and marshalling, for bodies that are not exactly
// one JSON value.
func decodedRequestHash(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode for hash: %w", err)
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode for hash: %w", err)
	}
	sum := sha256.Sum256(canon)
	return sum[:], nil
}

// member is an object member being sorted: its decoded name and its value's node.
type member struct {
	name []byte
	val  int
}

// canonicalWriter writes the canonical form of an indexed document, sorting members object by
// object, so its cost is linear in the body (plus the sorts) however the body is nested.
type canonicalWriter struct {
	x       *jsonIndex
	members []member // a stack: each object being written sorts its own run at the top
}

// write appends the canonical form of node i.
func (c *canonicalWriter) write(out []byte, i int) []byte {
	n := c.x.nodes[i]
	switch n.kind {
	case '"':
		return appendCanonicalString(out, c.x.raw(i))
	case '[':
		out = append(out, '[')
		for j := i + 1; j < i+n.span; j += c.x.nodes[j].span {
			if j > i+1 {
				out = append(out, ',')
			}
			out = c.write(out, j)
		}
		return append(out, ']')
	case '{':
		return c.writeObject(out, i)
	}
	return append(out, c.x.raw(i)...)
}

// writeObject appends an object with its members sorted by name, a repeated name keeping only
// its last value (as decoding into a map does).
func (c *canonicalWriter) writeObject(out []byte, i int) []byte {
	base := len(c.members)
	c.x.members(i, func(name, val int) bool {
		c.members = append(c.members, member{name: c.x.text(name), val: val})
		return true
	})
	top := len(c.members)
	slices.SortStableFunc(c.members[base:top], func(a, b member) int { return bytes.Compare(a.name, b.name) })
	out = append(out, '{')
	first := true
	for m := base; m < top; m++ {
		if m+1 < top && bytes.Equal(c.members[m].name, c.members[m+1].name) {
			continue // a later value of the same name wins
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = appendJSONString(out, c.members[m].name)
		out = append(out, ':')
		out = c.write(out, c.members[m].val)
	}
	c.members = c.members[:base]
	return append(out, '}')
}

// appendCanonicalString appends a string token as json.Marshal writes its decoded text. A
// token of printable ASCII without escapes or HTML characters is already in that form.
func appendCanonicalString(out, raw []byte) []byte {
	for _, b := range raw[1 : len(raw)-1] {
		if !htmlSafe(b) {
			return appendJSONString(out, decodedText(raw))
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
