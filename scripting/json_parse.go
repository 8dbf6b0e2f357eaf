package scripting

import (
	"bytes"
	"encoding/json"
)

// ParseJSON decodes data when it holds exactly one JSON value (white space around it is
// allowed) into the plain values Call takes, as encoding/json's Decoder with UseNumber
// decodes it: map[string]any, []any (empty, not nil, for []), string, json.Number, bool and
// nil. ok is false for anything else. It suits JSON from outside, such as an HTTP answer
// about to be passed to Call: it reads the common case in one pass (fastDecoder) and leaves
// the rest (escapes of lone surrogates, invalid UTF-8, deep nesting) to encoding/json.
// packages has a reader of the same kind for template data; SPEC section 2 lets scripting
// import goja only, so it shares fastDecoder with CallInto's decode instead.
func ParseJSON(data []byte) (v any, ok bool) {
	d := fastDecoder{data: data}
	if v, ok := d.plain(); ok {
		if d.space(); d.off == len(data) {
			return v, true
		}
	}
	if !json.Valid(data) {
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	return v, true
}

// plain reads the next value as plain Go values (see ParseJSON). Duplicate keys keep the
// last value, as encoding/json does.
func (d *fastDecoder) plain() (any, bool) {
	d.space()
	if d.off >= len(d.data) {
		return nil, false
	}
	switch d.data[d.off] {
	case '{':
		m := make(map[string]any)
		ok := d.members(func(key []byte) bool {
			k := string(key)
			v, ok := d.plain()
			m[k] = v
			return ok
		})
		return m, ok
	case '[':
		items := make([]any, 0)
		ok := d.elements(func() bool {
			v, ok := d.plain()
			items = append(items, v)
			return ok
		})
		return items, ok
	case '"':
		s, ok := d.str()
		return string(s), ok
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	}
	text, ok := d.numberText()
	return json.Number(text), ok
}
