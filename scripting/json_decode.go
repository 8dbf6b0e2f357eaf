package scripting

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// CallInto's strict decode is encoding/json with DisallowUnknownFields. Its reflection and
// scanner took a quarter of the CPU of a whole prepare call, so a fast path comes first: when
// out points to a zero value of a type with a decode plan (json_decode_plan.go), fastDecoder
// reads the JSON in one pass, straight into it. It gives up on anything that encoding/json
// would treat differently or refuse — a member whose name matches a field only without regard
// to case, an unknown or repeated member, a value of the wrong type, a number out of range, an
// escape other than the common ones, invalid UTF-8, a syntax error, trailing data. Then out is
// zeroed again (it was zero before) and encoding/json decodes it from scratch, so that the
// outcome, value and error alike, is always exactly encoding/json's.

// maxFastDepth bounds the nesting the fast path follows; deeper input goes to encoding/json.
const maxFastDepth = 2 * maxJSONDepth

// decodeStrict decodes raw into out as encoding/json's Decoder with DisallowUnknownFields
// does, and returns its error.
func (c *planCache) decodeStrict(raw []byte, out any) error {
	if v, ok := zeroTarget(out); ok {
		if plan := c.get(v.Type()); plan != nil {
			d := fastDecoder{data: raw}
			if d.top(plan, v) {
				return nil
			}
			v.SetZero() // undo the partial decode: out was zero
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// zeroTarget returns what out points to, and whether out is a non-nil pointer to a zero value.
func zeroTarget(out any) (reflect.Value, bool) {
	v := reflect.ValueOf(out)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return reflect.Value{}, false
	}
	v = v.Elem()
	return v, v.IsZero()
}

// fastDecoder reads one JSON value into a zero Go value following a plan. Its methods
// report false to give up; what they wrote by then is to be discarded.
type fastDecoder struct {
	data  []byte
	off   int
	depth int
	buf   []byte // unescaped text of the last string that had escapes
}

// top decodes the whole input: one value, then nothing but white space.
func (d *fastDecoder) top(plan *decodePlan, v reflect.Value) bool {
	if !d.value(plan, v) {
		return false
	}
	d.space()
	return d.off == len(d.data)
}

// value decodes the next value into v, a zero value of plan's type. A null leaves v as it
// is, as encoding/json leaves a zero value (it sets pointers, maps and slices to nil).
func (d *fastDecoder) value(plan *decodePlan, v reflect.Value) bool {
	d.space()
	if d.off >= len(d.data) {
		return false
	}
	c := d.data[d.off]
	if plan.kind == planRaw {
		start := d.off
		if !d.skip() {
			return false
		}
		v.SetBytes(append([]byte(nil), d.data[start:d.off]...))
		return true
	}
	if c == 'n' {
		return d.literal("null")
	}
	switch plan.kind {
	case planString:
		s, ok := d.str()
		if ok {
			v.SetString(string(s))
		}
		return ok
	case planBool:
		if c == 't' && d.literal("true") {
			v.SetBool(true)
			return true
		}
		return c == 'f' && d.literal("false")
	case planInt, planUint, planFloat:
		return d.number(plan.kind, v)
	case planPointer:
		p := reflect.New(plan.elem.typ)
		if !d.value(plan.elem, p.Elem()) {
			return false
		}
		v.Set(p)
		return true
	case planSlice:
		return c == '[' && d.slice(plan, v)
	case planMap:
		return c == '{' && d.mapping(plan, v)
	case planStruct:
		return c == '{' && d.object(plan, v)
	}
	return false
}

// object decodes an object into a struct: every member must name a field exactly, once.
func (d *fastDecoder) object(plan *decodePlan, v reflect.Value) bool {
	var seen uint64
	return d.members(func(key []byte) bool {
		i, ok := plan.byName[string(key)]
		if !ok || seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		f := &plan.fields[i]
		return d.value(f.plan, v.Field(f.index))
	})
}

// mapping decodes an object into a new map.
func (d *fastDecoder) mapping(plan *decodePlan, v reflect.Value) bool {
	if plan.stringMap {
		m := make(map[string]string)
		v.Set(reflect.ValueOf(m))
		return d.members(func(key []byte) bool {
			k := string(key)
			d.space()
			if d.off < len(d.data) && d.data[d.off] == 'n' {
				m[k] = "" // a null element is the zero value
				return d.literal("null")
			}
			s, ok := d.str()
			m[k] = string(s)
			return ok
		})
	}
	m := reflect.MakeMap(plan.typ)
	v.Set(m)
	keyType := plan.typ.Key()
	return d.members(func(key []byte) bool {
		k := reflect.New(keyType).Elem()
		k.SetString(string(key))
		e := reflect.New(plan.elem.typ).Elem()
		if !d.value(plan.elem, e) {
			return false
		}
		m.SetMapIndex(k, e)
		return true
	})
}

// slice decodes an array into a new slice; [] is an empty slice, not nil.
func (d *fastDecoder) slice(plan *decodePlan, v reflect.Value) bool {
	n := 0
	ok := d.elements(func() bool {
		if n >= v.Cap() {
			v.Grow(1)
		}
		v.SetLen(n + 1)
		n++
		return d.value(plan.elem, v.Index(n-1))
	})
	if ok && n == 0 {
		v.Set(reflect.MakeSlice(plan.typ, 0, 0))
	}
	return ok
}

// members walks the object whose '{' is next, calling member with each key (valid until the
// next read) once the colon is read; member decodes the value.
func (d *fastDecoder) members(member func(key []byte) bool) bool {
	if d.depth++; d.depth > maxFastDepth {
		return false
	}
	d.off++ // {
	d.space()
	if d.off < len(d.data) && d.data[d.off] == '}' {
		d.off++
		d.depth--
		return true
	}
	for {
		d.space()
		key, ok := d.str()
		if !ok {
			return false
		}
		d.space()
		if d.off >= len(d.data) || d.data[d.off] != ':' {
			return false
		}
		d.off++
		if !member(key) {
			return false
		}
		if !d.next('}') {
			return false
		}
		if d.data[d.off-1] == '}' {
			d.depth--
			return true
		}
	}
}

// elements walks the array whose '[' is next, calling element for each value.
func (d *fastDecoder) elements(element func() bool) bool {
	if d.depth++; d.depth > maxFastDepth {
		return false
	}
	d.off++ // [
	d.space()
	if d.off < len(d.data) && d.data[d.off] == ']' {
		d.off++
		d.depth--
		return true
	}
	for {
		if !element() || !d.next(']') {
			return false
		}
		if d.data[d.off-1] == ']' {
			d.depth--
			return true
		}
	}
}

// next reads the comma or the closing bracket after a member or element.
func (d *fastDecoder) next(closing byte) bool {
	d.space()
	if d.off >= len(d.data) {
		return false
	}
	if c := d.data[d.off]; c == ',' || c == closing {
		d.off++
		return true
	}
	return false
}

// skip reads over any one value (for json.RawMessage), checking its syntax.
func (d *fastDecoder) skip() bool {
	d.space()
	if d.off >= len(d.data) {
		return false
	}
	switch c := d.data[d.off]; c {
	case '{':
		return d.members(func([]byte) bool { return d.skip() })
	case '[':
		return d.elements(d.skip)
	case '"':
		_, ok := d.str()
		return ok
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	_, ok := d.numberText()
	return ok
}

// space skips JSON white space.
func (d *fastDecoder) space() {
	for d.off < len(d.data) {
		switch d.data[d.off] {
		case ' ', '\t', '\n', '\r':
			d.off++
		default:
			return
		}
	}
}

// literal reads the word true, false or null.
func (d *fastDecoder) literal(word string) bool {
	end := d.off + len(word)
	if end > len(d.data) || string(d.data[d.off:end]) != word {
		return false
	}
	d.off = end
	return true
}

// str reads a string and returns its text, which is valid until the next read. It gives up
// on invalid UTF-8, control characters and escapes of lone surrogates, which encoding/json
// replaces with U+FFFD.
func (d *fastDecoder) str() ([]byte, bool) {
	data := d.data
	if d.off >= len(data) || data[d.off] != '"' {
		return nil, false
	}
	start := d.off + 1
	for i := start; i < len(data); {
		switch c := data[i]; {
		case c == '"':
			d.off = i + 1
			return data[start:i], true
		case c == '\\':
			return d.unescape(start, i)
		case c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			i += size
		}
	}
	return nil, false
}

// unescape goes on with a string from its first backslash at i, writing the text into d.buf.
func (d *fastDecoder) unescape(start, i int) ([]byte, bool) {
	data := d.data
	buf := append(d.buf[:0], data[start:i]...)
	for i < len(data) {
		c := data[i]
		switch {
		case c == '"':
			d.off, d.buf = i+1, buf
			return buf, true
		case c == '\\':
			if i+1 >= len(data) {
				return nil, false
			}
			switch e := data[i+1]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, n := unicodeEscape(data[i:])
				if n == 0 {
					return nil, false
				}
				buf = utf8.AppendRune(buf, r)
				i += n
				continue
			default:
				return nil, false
			}
			i += 2
		case c < ' ':
			return nil, false
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			buf = append(buf, data[i:i+size]...)
			i += size
		}
	}
	return nil, false
}

// unicodeEscape reads \uXXXX, or a surrogate pair \uXXXX\uXXXX, at the start of s and returns
// the rune and the bytes read; 0 bytes when it is malformed or a lone surrogate.
func unicodeEscape(s []byte) (rune, int) {
	r := hex4(s)
	if r < 0 {
		return 0, 0
	}
	if !utf16.IsSurrogate(r) {
		return r, 6
	}
	low := hex4(s[6:])
	if dec := utf16.DecodeRune(r, low); low >= 0 && dec != utf8.RuneError {
		return dec, 12
	}
	return 0, 0
}

// hex4 reads \uXXXX at the start of s; -1 when it is not there.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r<<4 | rune(c)
	}
	return r
}

// number decodes a number into an integer or float value, as encoding/json converts it.
func (d *fastDecoder) number(kind planKind, v reflect.Value) bool {
	text, ok := d.numberText()
	if !ok {
		return false
	}
	switch kind {
	case planInt:
		n, ok := parseSmallInt(text)
		if !ok {
			var err error
			if n, err = strconv.ParseInt(string(text), 10, 64); err != nil {
				return false
			}
		}
		if v.OverflowInt(n) {
			return false
		}
		v.SetInt(n)
	case planUint:
		if text[0] == '-' {
			return false // ParseUint refuses even "-0"
		}
		n, ok := parseSmallInt(text)
		u := uint64(n)
		if !ok {
			var err error
			if u, err = strconv.ParseUint(string(text), 10, 64); err != nil {
				return false
			}
		}
		if v.OverflowUint(u) {
			return false
		}
		v.SetUint(u)
	default:
		// An integer of up to 15 digits is exact as a float64, as ParseFloat makes it;
		// "-0" is not (ParseFloat keeps its sign).
		n, ok := parseSmallInt(text)
		if ok && v.Kind() == reflect.Float64 && len(text) <= 15 && !(len(text) > 1 && text[0] == '-' && text[1] == '0') {
			v.SetFloat(float64(n))
			return true
		}
		f, err := strconv.ParseFloat(string(text), v.Type().Bits())
		if err != nil || v.OverflowFloat(f) {
			return false
		}
		v.SetFloat(f)
	}
	return true
}

// parseSmallInt parses an optional minus and 1 to 18 digits (no fraction or exponent).
func parseSmallInt(text []byte) (int64, bool) {
	digits := text
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(text) {
		n = -n
	}
	return n, true
}

// numberText reads a number in JSON's grammar and returns its text.
func (d *fastDecoder) numberText() ([]byte, bool) {
	data, i := d.data, d.off
	digits := func() bool {
		start := i
		for i < len(data) && isDigit(data[i]) {
			i++
		}
		return i > start
	}
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		return nil, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	text := data[d.off:i]
	d.off = i
	return text, true
}
