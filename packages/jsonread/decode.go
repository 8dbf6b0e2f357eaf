package jsonread

import "encoding/json"

// Decode is v as plain Go values, exactly what a json.Decoder with UseNumber gives for the same
// text: map[string]any (with the last value of a repeated name), []any (empty, never nil),
// string, json.Number as written, bool, and nil for null and for the zero Value.
func (v Value) Decode() any {
	switch v.Kind() {
	case Object:
		m := make(map[string]any, v.Len())
		v.Members(func(name, val Value) bool {
			m[name.Text()] = val.Decode()
			return true
		})
		return m
	case Array:
		list := make([]any, 0, v.Len())
		v.Elements(func(e Value) bool {
			list = append(list, e.Decode())
			return true
		})
		return list
	case String:
		return v.Text()
	case Number:
		return json.Number(v.Raw())
	case Bool:
		return v.Bool()
	}
	return nil
}
