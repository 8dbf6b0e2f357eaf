package engine

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// jsonNode is one value of a valid JSON document, in document order: objects and arrays are
// followed by their contents (an object's members as name string, then value).
type jsonNode struct {
	start, end int  // the value's bytes, quotes included for strings
	span       int  // nodes in this value's subtree, itself included: the next sibling's offset
	kind       byte // '{', '[', '"', or 0 for numbers, true, false and null
}

// jsonIndex is a JSON document indexed in one linear pass, so that the request hash and the
// submission decoder can walk it without decoding it into Go values.
type jsonIndex struct {
	src   []byte
	pos   int
	nodes []jsonNode
}

// maxJSONDepth is the nesting depth encoding/json accepts.
const maxJSONDepth = 10000

// indexJSON indexes src. It reports false exactly when json.Valid does: src is not one JSON
// value with optional space around it, or nests deeper than encoding/json allows.
func indexJSON(src []byte) (*jsonIndex, bool) {
	x := &jsonIndex{src: src, nodes: make([]jsonNode, 0, 32)}
	x.space()
	if !x.value(0) || x.pos != len(src) {
		return nil, false
	}
	return x, true
}

func (x *jsonIndex) space() {
	for x.pos < len(x.src) {
		switch x.src[x.pos] {
		case ' ', '\t', '\n', '\r':
			x.pos++
		default:
			return
		}
	}
}

// peek is the byte at x.pos, or 0 at the end.
func (x *jsonIndex) peek() byte {
	if x.pos < len(x.src) {
		return x.src[x.pos]
	}
	return 0
}

// value indexes the value at x.pos (no leading space) inside depth containers, and skips the
// space after it.
func (x *jsonIndex) value(depth int) bool {
	i := len(x.nodes)
	x.nodes = append(x.nodes, jsonNode{start: x.pos})
	var ok bool
	switch c := x.peek(); {
	case c == '{' || c == '[':
		x.nodes[i].kind = c
		ok = depth < maxJSONDepth && x.container(c, depth+1)
	case c == '"':
		x.nodes[i].kind = '"'
		ok = x.string()
	case c == '-' || c >= '0' && c <= '9':
		ok = x.number()
	case c == 't':
		ok = x.literal("true")
	case c == 'f':
		ok = x.literal("false")
	case c == 'n':
		ok = x.literal("null")
	}
	if !ok {
		return false
	}
	x.nodes[i].end = x.pos
	x.nodes[i].span = len(x.nodes) - i
	x.space()
	return true
}

// container indexes the contents of an object or an array opened by open, up to its closing
// bracket included.
func (x *jsonIndex) container(open byte, depth int) bool {
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	x.pos++
	x.space()
	if x.peek() == end {
		x.pos++
		return true
	}
	for {
		if open == '{' {
			if x.peek() != '"' || !x.value(depth) || x.peek() != ':' {
				return false
			}
			x.pos++
			x.space()
		}
		if !x.value(depth) {
			return false
		}
		switch x.peek() {
		case ',':
			x.pos++
			x.space()
		case end:
			x.pos++
			return true
		default:
			return false
		}
	}
}

// string skips a string token: no control characters, valid escapes only. Like encoding/json's
// scanner it does not check UTF-8 (decoding turns invalid bytes into U+FFFD).
func (x *jsonIndex) string() bool {
	for p := x.pos + 1; p < len(x.src); {
		switch c := x.src[p]; {
		case c == '"':
			x.pos = p + 1
			return true
		case c < 0x20:
			return false
		case c != '\\':
			p++
			continue
		}
		if p++; p == len(x.src) {
			return false
		}
		switch x.src[p] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			p++
		case 'u':
			if p+4 >= len(x.src) {
				return false
			}
			for _, h := range x.src[p+1 : p+5] {
				if !isHex(h) {
					return false
				}
			}
			p += 5
		default:
			return false
		}
	}
	return false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number skips a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (x *jsonIndex) number() bool {
	src, p := x.src, x.pos
	digits := func() bool {
		start := p
		for p < len(src) && isDigit(src[p]) {
			p++
		}
		return p > start
	}
	if src[p] == '-' {
		p++
	}
	switch {
	case p < len(src) && src[p] == '0':
		p++
	case !digits():
		return false
	}
	if p < len(src) && src[p] == '.' {
		p++
		if !digits() {
			return false
		}
	}
	if p < len(src) && (src[p] == 'e' || src[p] == 'E') {
		p++
		if p < len(src) && (src[p] == '+' || src[p] == '-') {
			p++
		}
		if !digits() {
			return false
		}
	}
	x.pos = p
	return true
}

func (x *jsonIndex) literal(word string) bool {
	if end := x.pos + len(word); end > len(x.src) || string(x.src[x.pos:end]) != word {
		return false
	}
	x.pos += len(word)
	return true
}

// raw is node i's bytes.
func (x *jsonIndex) raw(i int) []byte { return x.src[x.nodes[i].start:x.nodes[i].end] }

// members calls f with the name node and the value node of each member of object i, in
// document order, until f returns false; it reports whether f never did.
func (x *jsonIndex) members(i int, f func(name, val int) bool) bool {
	for j := i + 1; j < i+x.nodes[i].span; j += 1 + x.nodes[j+1].span {
		if !f(j, j+1) {
			return false
		}
	}
	return true
}

// text is the decoded text of string node i: its bytes when they need no decoding, otherwise
// what encoding/json decodes (escapes resolved, invalid UTF-8 as U+FFFD).
func (x *jsonIndex) text(i int) []byte { return decodedText(x.raw(i)) }

func decodedText(raw []byte) []byte {
	text := raw[1 : len(raw)-1]
	if bytes.IndexByte(text, '\\') < 0 && utf8.Valid(text) {
		return text
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return text // unreachable: the document is valid JSON
	}
	return []byte(s)
}
