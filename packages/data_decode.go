package packages

import (
	"encoding/json"
	"unicode/utf8"
)

// dataDecoder builds the Go value of a document that json.Valid accepted: what a json.Decoder
// with UseNumber gives (map[string]any with the last of repeated names, []any never nil,
// json.Number as written, strings decoded the same way), in one pass and without reflection.
// Template data is decoded on every submission, so this is on the accept path. scripting has a
// reader of the same kind (ParseJSON, for gateway answers), but SPEC section 2 lets packages
// import only the standard library and schema/yaml libraries, and scripting only goja, so
// neither can call the other's.
type dataDecoder struct {
	src []byte
	pos int
}

// decodeValidJSON decodes src, which must be valid JSON (json.Valid).
func decodeValidJSON(src []byte) any {
	d := dataDecoder{src: src}
	d.space()
	return d.value()
}

func (d *dataDecoder) space() {
	for d.pos < len(d.src) {
		switch d.src[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

// value decodes the value at d.pos (no leading space) and skips the space after it.
func (d *dataDecoder) value() any {
	var v any
	switch d.src[d.pos] {
	case '{':
		m := make(map[string]any)
		d.pos++
		d.space()
		for d.src[d.pos] != '}' {
			name := d.string()
			d.space()
			d.pos++ // ':'
			d.space()
			m[name] = d.value()
			if d.src[d.pos] == ',' {
				d.pos++
				d.space()
			}
		}
		d.pos++
		v = m
	case '[':
		list := []any{}
		d.pos++
		d.space()
		for d.src[d.pos] != ']' {
			list = append(list, d.value())
			if d.src[d.pos] == ',' {
				d.pos++
				d.space()
			}
		}
		d.pos++
		v = list
	case '"':
		v = d.string()
	case 't':
		d.pos += len("true")
		v = true
	case 'f':
		d.pos += len("false")
		v = false
	case 'n':
		d.pos += len("null")
	default:
		start := d.pos
		for d.pos < len(d.src) && !endsNumber(d.src[d.pos]) {
			d.pos++
		}
		v = json.Number(d.src[start:d.pos])
	}
	d.space()
	return v
}

func endsNumber(b byte) bool {
	switch b {
	case ',', ']', '}', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// string decodes the string token at d.pos: its bytes when they need no decoding, otherwise
// through encoding/json (escapes resolved, invalid UTF-8 as U+FFFD).
func (d *dataDecoder) string() string {
	start := d.pos
	plain := true
	d.pos++
	for d.src[d.pos] != '"' {
		if d.src[d.pos] == '\\' {
			plain = false
			d.pos++
		}
		d.pos++
	}
	d.pos++
	raw := d.src[start:d.pos]
	if text := raw[1 : len(raw)-1]; plain && utf8.Valid(text) {
		return string(text)
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return string(raw[1 : len(raw)-1]) // unreachable: the document is valid JSON
	}
	return s
}
