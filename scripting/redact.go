package scripting

import (
	"cmp"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
)

// Error messages must not carry the script's input, but goja quotes values in its own
// messages ("TypeError: Value is not an object: +15550123456"), and a script may build an
// exception from its input. So before a failure leaves Call, every string value of the input
// that appears in its message is replaced with redactedMark. Map keys are left alone (they
// are field names far more often than data), and so are strings shorter than minRedacted,
// which would mostly hit property names and ordinary words. This is best effort: a fragment
// of an input string (a slice the script took) is not recognised.

const (
	redactedMark = "[input]"
	minRedacted  = 6
	// maxRedactedStrings bounds the work on a failure with a very large input.
	maxRedactedStrings = 10000
)

// redact rewrites e.Message in place.
func redact(e *Error, args []any) {
	var found []string
	for _, a := range args {
		collectStrings(reflect.ValueOf(a), 0, &found)
	}
	// Longest first, so that a string containing another is replaced whole.
	slices.SortFunc(found, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, s := range found {
		if strings.Contains(e.Message, s) {
			e.Message = strings.ReplaceAll(e.Message, s, redactedMark)
		}
	}
}

// collectStrings appends the string values in v that are long enough to redact.
func collectStrings(v reflect.Value, depth int, found *[]string) {
	if len(*found) >= maxRedactedStrings || depth > maxJSONDepth || !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			collectStrings(v.Elem(), depth, found)
		}
	case reflect.String:
		if s := v.String(); len(s) >= minRedacted {
			*found = append(*found, s)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			collectStrings(iter.Value(), depth+1, found)
		}
	case reflect.Slice, reflect.Array:
		if obj, ok := v.Interface().(Object); ok { // the values, as for a map
			for _, m := range obj {
				collectStrings(reflect.ValueOf(m.Value), depth+1, found)
			}
			return
		}
		if raw, ok := v.Interface().(json.RawMessage); ok {
			var decoded any
			if json.Unmarshal(raw, &decoded) == nil {
				collectStrings(reflect.ValueOf(decoded), depth, found)
			}
			return
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			collectStrings(v.Index(i), depth+1, found)
		}
	case reflect.Struct:
		raw, err := json.Marshal(v.Interface())
		if err != nil {
			return
		}
		var decoded any
		if json.Unmarshal(raw, &decoded) == nil {
			collectStrings(reflect.ValueOf(decoded), depth, found)
		}
	}
}
