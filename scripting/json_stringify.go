package scripting

import (
	"strconv"

	"github.com/dop251/goja"
)

// The script-visible JSON.stringify: the same writer as results, with the replacer (a
// function or a property list) and the indentation of ECMA-262, capped at
// Limits.StringBytes.

// jsonStringify is the script-visible JSON.stringify, capped at Limits.StringBytes.
func (sb *sandbox) jsonStringify(call goja.FunctionCall) goja.Value {
	w := jsonWriter{sb: sb, what: "JSON.stringify", limit: sb.p.limits.StringBytes}
	if r, ok := call.Argument(1).(*goja.Object); ok {
		if fn, ok := goja.AssertFunction(r); ok {
			w.replacer = fn
		} else if r.ClassName() == "Array" {
			w.props = sb.propertyList(r)
		}
	}
	w.gap = jsonGap(call.Argument(2))
	if !w.property(nil, "", call.Argument(0)) {
		return goja.Undefined()
	}
	return sb.vm.ToValue(string(w.buf))
}

// propertyList reads a replacer array: strings and numbers (or their wrappers), deduplicated.
func (sb *sandbox) propertyList(r *goja.Object) []string {
	n := sb.lengthOf(r)
	sb.checkLength("JSON.stringify", n)
	list := make([]string, 0, int(n))
	seen := make(map[string]bool, int(n))
	for i := 0; i < int(n); i++ {
		v := r.Get(strconv.Itoa(i))
		var name string
		switch {
		case goja.IsString(v) || goja.IsNumber(v):
			name = v.String()
		case isWrapper(v):
			name = v.ToString().String()
		default:
			continue
		}
		if !seen[name] {
			seen[name] = true
			list = append(list, name)
		}
	}
	return list
}

// isWrapper reports whether v is a Number or String wrapper object.
func isWrapper(v goja.Value) bool {
	obj, ok := v.(*goja.Object)
	return ok && (obj.ClassName() == "Number" || obj.ClassName() == "String")
}

// jsonGap is the indentation JSON.stringify's space argument asks for.
func jsonGap(space goja.Value) string {
	if obj, ok := space.(*goja.Object); ok {
		switch obj.ClassName() {
		case "Number":
			space = obj.ToNumber()
		case "String":
			space = obj.ToString()
		}
	}
	switch {
	case goja.IsNumber(space):
		n := space.ToFloat()
		if !(n >= 1) { // also NaN
			return ""
		}
		return "          "[:int(min(10, n))]
	case goja.IsString(space):
		s := space.(goja.String)
		if s.Length() > 10 {
			s = s.Substring(0, 10)
		}
		return s.String()
	}
	return ""
}
