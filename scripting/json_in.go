package scripting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"switchboard/packages/jsonread"
)

// toJS converts one Go argument into a fresh JavaScript value built for this call only: an
// object or array the script mutates never reaches the caller or the next call. Supported: nil,
// bool, string, every integer and float type, json.Number, json.RawMessage, map[string]any,
// Object, []any, and by reflection any map with string keys, slice or array of those, and named
// types of the basic kinds; anything else (structs, pointers) goes through encoding/json first.
// Object keys are inserted in sorted order, so that a script sees (and echoes) a deterministic
// order. Nesting deeper than maxJSONDepth is refused. Strings are UTF-8; each byte of an invalid
// sequence arrives as U+FFFD.
func (sb *sandbox) toJS(v any, depth int) (goja.Value, error) {
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("%w: nesting deeper than %d", ErrInput, maxJSONDepth)
	}
	vm := sb.vm
	arg := v
	switch v := v.(type) {
	case nil:
		return goja.Null(), nil
	case string, bool, float64, int, int64:
		return vm.ToValue(arg), nil // arg as it came: boxing v again would allocate
	case json.Number:
		if i, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return vm.ToValue(i), nil
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, fmt.Errorf("%w: invalid json.Number", ErrInput)
		}
		return vm.ToValue(f), nil
	case map[string]any:
		if v == nil {
			return goja.Null(), nil // as encoding/json writes it
		}
		var small [16]string
		keys := small[:0]
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		obj := sb.newArgObject()
		for _, k := range keys {
			val, err := sb.toJS(v[k], depth+1)
			if err != nil {
				return nil, err
			}
			_ = obj.Set(k, val)
		}
		return sb.finishArgObject(obj)
	case Object:
		if v == nil {
			return goja.Null(), nil
		}
		if !v.sorted() {
			return sb.toJS(v.asMap(), depth)
		}
		obj := sb.newArgObject()
		for _, m := range v {
			val, err := sb.toJS(m.Value, depth+1)
			if err != nil {
				return nil, err
			}
			_ = obj.Set(m.Name, val)
		}
		return sb.finishArgObject(obj)
	case []any:
		if v == nil {
			return goja.Null(), nil
		}
		items := make([]any, len(v))
		for i, item := range v {
			val, err := sb.toJS(item, depth+1)
			if err != nil {
				return nil, err
			}
			items[i] = val
		}
		return vm.NewArray(items...), nil
	case json.RawMessage:
		return sb.fromJSON(v, depth)
	case goja.Value:
		return nil, fmt.Errorf("%w: goja values cannot cross runtimes", ErrInput)
	}
	return sb.reflectToJS(reflect.ValueOf(v), depth)
}

// reflectToJS handles the kinds toJS has no fast path for.
func (sb *sandbox) reflectToJS(rv reflect.Value, depth int) (goja.Value, error) {
	vm := sb.vm
	switch rv.Kind() {
	case reflect.String:
		return vm.ToValue(rv.String()), nil
	case reflect.Bool:
		return vm.ToValue(rv.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return vm.ToValue(rv.Int()), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return vm.ToValue(float64(rv.Uint())), nil
	case reflect.Float32, reflect.Float64:
		return vm.ToValue(rv.Float()), nil
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String || rv.Type().Implements(marshalerType) {
			break
		}
		if rv.IsNil() {
			return goja.Null(), nil
		}
		keys := rv.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
		obj := sb.newArgObject()
		for _, k := range keys {
			val, err := sb.toJS(rv.MapIndex(k).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			_ = obj.Set(k.String(), val)
		}
		return sb.finishArgObject(obj)
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 || rv.Type().Implements(marshalerType) {
			break // bytes: as encoding/json writes them (base64)
		}
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return goja.Null(), nil
		}
		items := make([]any, rv.Len())
		for i := range items {
			val, err := sb.toJS(rv.Index(i).Interface(), depth+1)
			if err != nil {
				return nil, err
			}
			items[i] = val
		}
		return vm.NewArray(items...), nil
	case reflect.Invalid:
		return goja.Null(), nil
	}
	raw, err := json.Marshal(rv.Interface())
	if err != nil {
		return nil, fmt.Errorf("%w: %s cannot be encoded: %w", ErrInput, rv.Type(), err)
	}
	return sb.fromJSON(raw, depth)
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// newArgObject starts a fresh plain object for an argument. It has no prototype while its
// members are assigned, so that an assignment (obj.Set) does exactly what
// Object.defineProperty with every flag true would, and cheaply: no property of
// Object.prototype is on the way (neither __proto__'s setter, which would change the
// prototype, nor the frozen methods and the lockdown's accessors). finishArgObject then gives
// it Object.prototype.
func (sb *sandbox) newArgObject() *goja.Object {
	return sb.vm.CreateObject(nil)
}

// finishArgObject gives an argument object built by newArgObject its prototype.
func (sb *sandbox) finishArgObject(obj *goja.Object) (goja.Value, error) {
	if err := obj.SetPrototype(sb.objectPrototype); err != nil {
		return nil, fmt.Errorf("scripting: an argument object refused Object.prototype: %w", err)
	}
	return obj, nil
}

// fromJSON decodes raw JSON (numbers kept exact as json.Number) and converts it. Like
// encoding/json's Decoder, it reads the first value and ignores what follows: the one reader
// (ParseJSON's, with AllowTrailing) reads what decodes, and encoding/json says why the rest
// does not, with its own error.
func (sb *sandbox) fromJSON(raw []byte, depth int) (goja.Value, error) {
	if doc, err := jsonread.Read(raw, jsonread.Lenient|jsonread.AllowTrailing); err == nil {
		return sb.toJS(doc.Root().Decode(), depth)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: invalid JSON: %w", ErrInput, err)
	}
	return sb.toJS(v, depth)
}

// installJSON replaces JSON.stringify with jsonStringify, guards JSON.parse against nesting
// (goja's parser recurses in Go without a limit) and removes JSON.rawJSON and
// JSON.isRawJSON, which the sandbox's serializer does not support.
func (sb *sandbox) installJSON() {
	vm := sb.vm
	j := vm.Get("JSON").ToObject(vm)
	sb.replaceMethod(j, "parse", func(orig native) native {
		return func(call goja.FunctionCall) goja.Value {
			text := call.Argument(0).ToString()
			if jsonTooDeep(text.String(), maxJSONDepth) {
				sb.throwRange("JSON.parse: nesting deeper than %d", maxJSONDepth)
			}
			return orig(goja.FunctionCall{This: call.This, Arguments: []goja.Value{text, call.Argument(1)}})
		}
	})
	sb.replaceMethod(j, "stringify", func(native) native { return sb.jsonStringify })
	for _, name := range []string{"rawJSON", "isRawJSON"} {
		if err := j.Delete(name); err != nil {
			panic(err)
		}
	}
}

// jsonTooDeep reports whether the JSON text s nests arrays and objects deeper than limit.
// It does not validate s; the parser does that afterwards.
func jsonTooDeep(s string, limit int) bool {
	depth, inString, escaped := 0, false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > limit {
				return true
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return false
}
