package jsonread

import "math"

// Mode chooses what Read forgives. The zero Mode is strict.
type Mode uint8

const (
	// AllowDuplicates takes an object that repeats a member name; Decode keeps the last value,
	// as encoding/json does.
	AllowDuplicates Mode = 1 << iota
	// AllowInvalidUnicode takes strings with invalid UTF-8 or escapes of lone surrogates;
	// their text reads U+FFFD in their place, as encoding/json decodes them.
	AllowInvalidUnicode
	// AllowTrailing indexes the first value and ignores what follows it, as the first Decode
	// of a json.Decoder does; Doc.End says where the value ended.
	AllowTrailing
)

// Strict refuses repeated member names, invalid UTF-8 and lone surrogate escapes.
const Strict Mode = 0

// Lenient reads as encoding/json does: repeated names (the last wins) and invalid Unicode (as
// U+FFFD) are taken.
const Lenient = AllowDuplicates | AllowInvalidUnicode

// MaxDepth is the deepest nesting of arrays and objects Read takes: encoding/json's limit.
const MaxDepth = 10000

// smallObject is how many member names an object compares one by one before it keeps them in
// a map: requests have objects of a few members, which a map would only slow down.
const smallObject = 16

// Read indexes src, which must hold exactly one JSON value with optional white space around it
// (or, with AllowTrailing, start with one). The Doc keeps src, which must not change while the
// Doc is in use. A refusal is an *Error.
func Read(src []byte, mode Mode) (*Doc, error) {
	d := &Doc{}
	if err := d.read(src, mode, make([]node, 0, 8+len(src)/8)); err != nil {
		return nil, err
	}
	return d, nil
}

// ReadInto is Read into d, reusing the index d already holds: for a caller that reads many
// documents one after the other and keeps none (a pool of Docs). The Values of what d held
// before are no longer valid; after a refusal, d holds no document and must not be walked.
func ReadInto(d *Doc, src []byte, mode Mode) error {
	return d.read(src, mode, d.nodes[:0])
}

func (d *Doc) read(src []byte, mode Mode, nodes []node) error {
	d.src, d.nodes = nil, nodes[:0]
	if len(src) > math.MaxInt32 {
		return &Error{Reason: TooLarge}
	}
	r := reader{src: src, mode: mode, nodes: nodes}
	r.space()
	if r.pos == len(src) {
		return &Error{Reason: Empty, Offset: r.pos}
	}
	ok := r.value(0)
	d.nodes = r.nodes[:0] // kept for the next ReadInto, whatever happens
	if !ok {
		return r.err
	}
	if r.pos != len(src) && mode&AllowTrailing == 0 {
		return &Error{Reason: Trailing, Offset: r.pos}
	}
	d.src, d.nodes = src, r.nodes
	return nil
}

// reader is the state of one Read.
type reader struct {
	src   []byte
	pos   int
	mode  Mode
	nodes []node
	err   *Error
	// name and other hold the unescaped text of member names being compared.
	name, other []byte
}

// fail records the first refusal and returns false.
func (r *reader) fail(reason Reason, at int) bool {
	if r.err == nil {
		r.err = &Error{Reason: reason, Offset: at}
	}
	return false
}

func (r *reader) space() {
	for r.pos < len(r.src) {
		switch r.src[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// peek is the byte at r.pos, or 0 at the end.
func (r *reader) peek() byte {
	if r.pos < len(r.src) {
		return r.src[r.pos]
	}
	return 0
}

// value indexes the value at r.pos (no leading space) inside depth containers, then skips the
// white space after it.
func (r *reader) value(depth int) bool {
	i := len(r.nodes)
	r.nodes = append(r.nodes, node{start: int32(r.pos)})
	var ok bool
	var kind Kind
	switch c := r.peek(); {
	case c == '{' || c == '[':
		kind = Object
		if c == '[' {
			kind = Array
		}
		if depth >= MaxDepth {
			return r.fail(TooDeep, r.pos)
		}
		if kind == Object {
			ok = r.object(i, depth+1)
		} else {
			ok = r.array(depth + 1)
		}
	case c == '"':
		kind = String
		var plain bool
		plain, ok = r.str()
		r.nodes[i].plain = plain
	case c == '-' || c >= '0' && c <= '9':
		kind, ok = Number, r.number()
	case c == 't':
		kind, ok = Bool, r.literal("true")
	case c == 'f':
		kind, ok = Bool, r.literal("false")
	case c == 'n':
		kind, ok = Null, r.literal("null")
	default:
		return r.fail(Syntax, r.pos)
	}
	if !ok {
		return false
	}
	n := &r.nodes[i]
	n.kind, n.end, n.span = kind, int32(r.pos), int32(len(r.nodes)-i)
	r.space()
	return true
}

// array indexes an array's elements, up to its closing bracket included.
func (r *reader) array(depth int) bool {
	r.pos++
	r.space()
	if r.peek() == ']' {
		r.pos++
		return true
	}
	for {
		if !r.value(depth) {
			return false
		}
		switch r.peek() {
		case ',':
			r.pos++
			r.space()
		case ']':
			r.pos++
			return true
		default:
			return r.fail(Syntax, r.pos)
		}
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number skips a number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (r *reader) number() bool {
	src, p := r.src, r.pos
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
		return r.fail(Syntax, p)
	}
	if p < len(src) && src[p] == '.' {
		p++
		if !digits() {
			return r.fail(Syntax, p)
		}
	}
	if p < len(src) && (src[p] == 'e' || src[p] == 'E') {
		p++
		if p < len(src) && (src[p] == '+' || src[p] == '-') {
			p++
		}
		if !digits() {
			return r.fail(Syntax, p)
		}
	}
	r.pos = p
	return true
}

func (r *reader) literal(word string) bool {
	if end := r.pos + len(word); end > len(r.src) || string(r.src[r.pos:end]) != word {
		return r.fail(Syntax, r.pos)
	}
	r.pos += len(word)
	return true
}
