package scripting

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"

	"switchboard/packages/jsonread"
)

// CallInto's strict decode is encoding/json with DisallowUnknownFields. Its reflection and
// scanner took a quarter of the CPU of a whole prepare call, so a fast path comes first: when
// out points to a zero value of a type with a decode plan (json_decode_plan.go), the one JSON
// reader indexes the result strictly and the plan walks the index straight into out. It gives
// up on anything that encoding/json would treat differently or refuse — a member whose name
// matches a field only without regard to case, an unknown member, a value of the wrong type, a
// number out of range, and whatever the strict reader refuses (a syntax error, trailing data, a
// repeated member, invalid UTF-8, a lone surrogate escape). Then out is zeroed again (it was
// zero before) and encoding/json decodes it from scratch, so that the outcome, value and error
// alike, is always exactly encoding/json's.

// decodeStrict decodes raw into out as encoding/json's Decoder with DisallowUnknownFields
// does, and returns its error.
func (c *planCache) decodeStrict(raw []byte, out any) error {
	if v, ok := zeroTarget(out); ok {
		if plan := c.get(v.Type()); plan != nil {
			if c.fastDecode(plan, raw, v) {
				return nil
			}
			v.SetZero() // undo the partial decode: out was zero
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// fastDecode decodes the whole of raw into v, a zero value of plan's type, and reports whether
// it did; what it wrote when it did not is to be discarded. The index is read into a Doc of the
// cache's pool: every call decodes one result and keeps nothing of its index.
func (c *planCache) fastDecode(plan *decodePlan, raw []byte, v reflect.Value) bool {
	doc, _ := c.docs.Get().(*jsonread.Doc)
	if doc == nil {
		doc = new(jsonread.Doc)
	}
	defer c.docs.Put(doc)
	return jsonread.ReadInto(doc, raw, jsonread.Strict) == nil && decodeValue(plan, doc.Root(), v)
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

// decodeValue decodes j into v, a zero value of plan's type. A null leaves v as it is, as
// encoding/json leaves a zero value (it sets pointers, maps and slices to nil).
func decodeValue(plan *decodePlan, j jsonread.Value, v reflect.Value) bool {
	kind := j.Kind()
	if plan.kind == planRaw {
		v.SetBytes(append([]byte(nil), j.Raw()...))
		return true
	}
	if kind == jsonread.Null {
		return true
	}
	switch plan.kind {
	case planString:
		if kind == jsonread.String {
			v.SetString(j.Text())
			return true
		}
	case planBool:
		if kind == jsonread.Bool {
			v.SetBool(j.Bool())
			return true
		}
	case planInt, planUint, planFloat:
		return kind == jsonread.Number && number(plan.kind, j.Raw(), v)
	case planPointer:
		p := reflect.New(plan.elem.typ)
		if !decodeValue(plan.elem, j, p.Elem()) {
			return false
		}
		v.Set(p)
		return true
	case planSlice:
		return kind == jsonread.Array && decodeSlice(plan, j, v)
	case planMap:
		return kind == jsonread.Object && decodeMap(plan, j, v)
	case planStruct:
		return kind == jsonread.Object && decodeStruct(plan, j, v)
	}
	return false
}

// decodeStruct decodes an object into a struct: every member must name a field exactly (the
// reader has refused a repeated one).
func decodeStruct(plan *decodePlan, j jsonread.Value, v reflect.Value) bool {
	return j.Members(func(name, val jsonread.Value) bool {
		i, ok := plan.byName[string(name.Bytes())]
		if !ok {
			return false
		}
		f := &plan.fields[i]
		return decodeValue(f.plan, val, v.Field(f.index))
	})
}

// decodeMap decodes an object into a new map.
func decodeMap(plan *decodePlan, j jsonread.Value, v reflect.Value) bool {
	if plan.stringMap {
		m := make(map[string]string, j.Len())
		v.Set(reflect.ValueOf(m))
		return j.Members(func(name, val jsonread.Value) bool {
			switch val.Kind() {
			case jsonread.Null:
				m[name.Text()] = "" // a null element is the zero value
			case jsonread.String:
				m[name.Text()] = val.Text()
			default:
				return false
			}
			return true
		})
	}
	m := reflect.MakeMapWithSize(plan.typ, j.Len())
	v.Set(m)
	keyType := plan.typ.Key()
	return j.Members(func(name, val jsonread.Value) bool {
		k := reflect.New(keyType).Elem()
		k.SetString(name.Text())
		e := reflect.New(plan.elem.typ).Elem()
		if !decodeValue(plan.elem, val, e) {
			return false
		}
		m.SetMapIndex(k, e)
		return true
	})
}

// decodeSlice decodes an array into a new slice; [] is an empty slice, not nil.
func decodeSlice(plan *decodePlan, j jsonread.Value, v reflect.Value) bool {
	n := j.Len()
	v.Set(reflect.MakeSlice(plan.typ, n, n))
	i := 0
	return j.Elements(func(e jsonread.Value) bool {
		ok := decodeValue(plan.elem, e, v.Index(i))
		i++
		return ok
	})
}

// number decodes the text of a number into an integer or float value, as encoding/json
// converts it.
func number(kind planKind, text []byte, v reflect.Value) bool {
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
