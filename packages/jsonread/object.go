package jsonread

import "bytes"

// object indexes the members of object node self (each a name node, then a value node), up to
// its closing brace included, refusing a repeated name unless the mode allows it.
func (r *reader) object(self, depth int) bool {
	r.pos++
	r.space()
	if r.peek() == '}' {
		r.pos++
		return true
	}
	check := r.mode&AllowDuplicates == 0
	var set map[string]struct{} // the names, once the object has more than smallObject
	for count := 0; ; count++ {
		at := r.pos
		if r.peek() != '"' {
			return r.fail(Syntax, r.pos)
		}
		name := len(r.nodes)
		if !r.value(depth) {
			return false
		}
		if check && !r.newName(self, name, count, &set) {
			return r.fail(Duplicate, at)
		}
		if r.peek() != ':' {
			return r.fail(Syntax, r.pos)
		}
		r.pos++
		r.space()
		if !r.value(depth) {
			return false
		}
		switch r.peek() {
		case ',':
			r.pos++
			r.space()
		case '}':
			r.pos++
			return true
		default:
			return r.fail(Syntax, r.pos)
		}
	}
}

// newName reports whether name node i differs from the count names before it in object self.
// Small objects compare it with each earlier name, in the index already built; from the
// smallObject-th name on, *set holds them all.
func (r *reader) newName(self, i, count int, set *map[string]struct{}) bool {
	name := r.nameText(i, &r.name)
	if *set == nil && count < smallObject {
		nodes := r.nodes
		for j := self + 1; j < i; j += 1 + int(nodes[j+1].span) {
			// A plain name equals name only when their lengths do; the others are unescaped.
			if n := nodes[j]; n.plain {
				if int(n.end-n.start-2) == len(name) && string(r.src[n.start+1:n.end-1]) == string(name) {
					return false
				}
			} else if bytes.Equal(r.nameText(j, &r.other), name) {
				return false
			}
		}
		return true
	}
	if *set == nil {
		*set = make(map[string]struct{}, 4*smallObject)
		for j := self + 1; j < i; j += 1 + int(r.nodes[j+1].span) {
			(*set)[string(r.nameText(j, &r.other))] = struct{}{}
		}
	}
	if _, dup := (*set)[string(name)]; dup {
		return false
	}
	(*set)[string(name)] = struct{}{}
	return true
}

// nameText is the text of name node i: its bytes when plain, otherwise its unescaped text,
// written over *buf.
func (r *reader) nameText(i int, buf *[]byte) []byte {
	n := r.nodes[i]
	if n.plain {
		return r.src[n.start+1 : n.end-1]
	}
	*buf = appendText((*buf)[:0], r.src[n.start:n.end])
	return *buf
}
