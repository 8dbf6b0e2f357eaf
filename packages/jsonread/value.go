package jsonread

// Kind is the kind of a JSON value.
type Kind uint8

// The kinds of values. The zero Kind is that of the zero Value: no value at all.
const (
	Absent Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

// node is one value of a document, in document order: an array is followed by its elements,
// an object by its members (a name string, then its value).
type node struct {
	start, end int32 // the value's bytes, quotes included for strings
	span       int32 // nodes in the value's subtree, itself included: the offset of its sibling
	kind       Kind
	plain      bool // a string whose text is its bytes between the quotes
}

// Doc is an indexed JSON document. It is read-only and safe for concurrent use.
type Doc struct {
	src   []byte
	nodes []node
}

// Root is the document's value.
func (d *Doc) Root() Value { return Value{d: d} }

// End is the offset just after the root value (with AllowTrailing, where the rest begins).
func (d *Doc) End() int { return int(d.nodes[0].end) }

// Value is one value of a Doc. The zero Value is absent: its Kind is Absent and it has no
// members, elements or text.
type Value struct {
	d *Doc
	i int32
}

// Exists reports whether v is a value (not the zero Value).
func (v Value) Exists() bool { return v.d != nil }

// Kind is the kind of v.
func (v Value) Kind() Kind {
	if v.d == nil {
		return Absent
	}
	return v.d.nodes[v.i].kind
}

// Raw is v's bytes in the document, exactly as written (quotes included for a string). The
// slice aliases the document: it must not be modified.
func (v Value) Raw() []byte {
	if v.d == nil {
		return nil
	}
	n := v.d.nodes[v.i]
	return v.d.src[n.start:n.end:n.end]
}

// Offset is the byte offset of v in the document, for messages that locate a problem.
func (v Value) Offset() int {
	if v.d == nil {
		return 0
	}
	return int(v.d.nodes[v.i].start)
}

// Bool is true for the value true.
func (v Value) Bool() bool { return v.Kind() == Bool && v.Raw()[0] == 't' }

// Bytes is the text of a string value: escapes resolved, and where the document was read
// leniently, invalid Unicode as U+FFFD. It aliases the document when the text needed no
// decoding, so it must not be modified. It is nil for other kinds.
func (v Value) Bytes() []byte {
	if v.Kind() != String {
		return nil
	}
	raw := v.Raw()
	if v.d.nodes[v.i].plain {
		return raw[1 : len(raw)-1]
	}
	return appendText(make([]byte, 0, len(raw)), raw)
}

// Text is the text of a string value (see Bytes), "" for other kinds.
func (v Value) Text() string {
	if v.Kind() == String && v.d.nodes[v.i].plain {
		raw := v.Raw()
		return string(raw[1 : len(raw)-1])
	}
	return string(v.Bytes())
}

// Members calls f with the name (a string value) and the value of each member of an object,
// in document order, until f returns false; it reports whether f never did. It calls nothing
// for other kinds.
func (v Value) Members(f func(name, val Value) bool) bool {
	if v.Kind() != Object {
		return true
	}
	nodes := v.d.nodes
	end := v.i + nodes[v.i].span
	for j := v.i + 1; j < end; j += 1 + nodes[j+1].span {
		if !f(Value{v.d, j}, Value{v.d, j + 1}) {
			return false
		}
	}
	return true
}

// Elements calls f with each element of an array, in order, until f returns false; it reports
// whether f never did. It calls nothing for other kinds.
func (v Value) Elements(f func(Value) bool) bool {
	if v.Kind() != Array {
		return true
	}
	nodes := v.d.nodes
	end := v.i + nodes[v.i].span
	for j := v.i + 1; j < end; j += nodes[j].span {
		if !f(Value{v.d, j}) {
			return false
		}
	}
	return true
}

// Len is the number of members of an object or elements of an array, 0 for other kinds.
func (v Value) Len() int {
	n := 0
	switch v.Kind() {
	case Object:
		v.Members(func(_, _ Value) bool { n++; return true })
	case Array:
		v.Elements(func(Value) bool { n++; return true })
	}
	return n
}

// PlainName reports whether a member name is a plain identifier: an ASCII letter or underscore,
// then up to 63 more letters, digits or underscores. Answers to a request may name such a
// member (an unknown one, one that failed a check); any other name is the sender's text, which
// an answer never repeats.
func PlainName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
