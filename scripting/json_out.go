package scripting

import (
	"math"
	"reflect"
	"strconv"

	"github.com/dop251/goja"
)

// maxJSONDepth bounds the nesting of the JSON the sandbox builds (arguments), parses
// (JSON.parse) and serializes (results, JSON.stringify). goja's own JSON code recurses in Go
// without a limit and checks for cycles in time proportional to the depth: serializing a
// 100000-deep array took longer than the test's 10 s timeout, uninterruptibly.
const maxJSONDepth = 128

// jsonWriter is JSON.stringify (ECMA-262 SerializeJSONProperty and friends) with a size
// budget checked before each piece is written, and a nesting cap that also bounds the cost
// of the cycle check. It serves both the script-visible JSON.stringify and the serialization
// of results, which therefore never depends on anything the script could have replaced.
type jsonWriter struct {
	sb       *sandbox
	what     string
	buf      []byte
	limit    int
	truncate bool // stop quietly at the limit (console) instead of throwing
	full     bool
	replacer goja.Callable
	props    []string // the replacer's property list; nil when there is none
	gap      string
	indent   string
	stack    []*goja.Object
}

// property serializes value, found under key in holder (nil for the root), and reports
// whether it produced anything (undefined, functions and symbols produce nothing).
func (w *jsonWriter) property(holder *goja.Object, key string, value goja.Value) bool {
	vm := w.sb.vm
	if obj, ok := value.(*goja.Object); ok {
		if fn, ok := goja.AssertFunction(obj.Get("toJSON")); ok {
			value = callJS(fn, obj, vm.ToValue(key))
		}
	}
	if w.replacer != nil {
		if holder == nil {
			holder = vm.NewObject()
			_ = holder.Set("", value)
		}
		value = callJS(w.replacer, holder, vm.ToValue(key), value)
	}
	if obj, ok := value.(*goja.Object); ok {
		switch obj.ClassName() {
		case "Number":
			value = vm.ToValue(obj.ToFloat())
		case "String":
			value = obj.ToString()
		case "Boolean":
			if b, ok := obj.Export().(bool); ok {
				value = vm.ToValue(b)
			}
		}
	}
	switch {
	case value == nil || goja.IsUndefined(value):
		return false
	case goja.IsNull(value):
		w.raw("null")
	case goja.IsString(value):
		w.str(value)
	case goja.IsNumber(value):
		w.number(value)
	case goja.IsBigInt(value):
		w.sb.throwType("%s: a BigInt cannot be serialized", w.what)
	default:
		obj, ok := value.(*goja.Object)
		if !ok {
			if b, ok := value.Export().(bool); ok {
				w.raw(strconv.FormatBool(b))
				return true
			}
			return false // a symbol
		}
		switch obj.ClassName() {
		case "Array":
			w.enter(obj)
			w.array(obj)
			w.leave()
		case "Object":
			w.enter(obj)
			w.object(obj)
			w.leave()
		default:
			if _, callable := goja.AssertFunction(obj); callable {
				return false
			}
			w.enter(obj)
			w.object(obj)
			w.leave()
		}
	}
	return true
}

// enter pushes obj on the stack of objects being serialized, refusing cycles and depth.
func (w *jsonWriter) enter(obj *goja.Object) {
	for _, o := range w.stack {
		if o == obj {
			w.sb.throwType("%s: cannot serialize a cyclic structure", w.what)
		}
	}
	if len(w.stack) >= maxJSONDepth {
		w.sb.throwRange("%s: nesting deeper than %d", w.what, maxJSONDepth)
	}
	w.stack = append(w.stack, obj)
}

// leave pops the stack.
func (w *jsonWriter) leave() { w.stack = w.stack[:len(w.stack)-1] }

// object writes the enumerable own properties (or the replacer's list) of obj.
func (w *jsonWriter) object(obj *goja.Object) {
	keys := w.props
	if keys == nil {
		keys = obj.Keys()
	}
	stepback := w.indent
	w.indent += w.gap
	w.raw("{")
	empty := true
	for _, k := range keys {
		if w.full {
			return
		}
		v := obj.Get(k)
		mark := len(w.buf)
		if !empty {
			w.raw(",")
		}
		w.newline()
		w.key(k)
		if !w.property(obj, k, v) {
			w.buf = w.buf[:mark]
			continue
		}
		empty = false
	}
	w.indent = stepback
	if !empty {
		w.newline()
	}
	w.raw("}")
}

// array writes the elements of obj; holes and unserializable elements become null.
func (w *jsonWriter) array(obj *goja.Object) {
	n := int64(w.sb.lengthOf(obj))
	if n == 0 {
		w.raw("[]")
		return
	}
	stepback := w.indent
	w.indent += w.gap
	w.raw("[")
	for i := int64(0); i < n && !w.full; i++ {
		if i > 0 {
			w.raw(",")
		}
		w.newline()
		k := strconv.FormatInt(i, 10)
		if !w.property(obj, k, obj.Get(k)) {
			w.raw("null")
		}
	}
	w.indent = stepback
	w.newline()
	w.raw("]")
}

// newline starts a new indented line when there is a gap.
func (w *jsonWriter) newline() {
	if w.gap != "" {
		w.raw("\n")
		w.raw(w.indent)
	}
}

// key writes a property name and its colon.
func (w *jsonWriter) key(k string) {
	if !w.room(len(k) + 4) {
		return
	}
	w.buf = appendQuotedString(w.buf, k)
	if w.gap != "" {
		w.buf = append(w.buf, ':', ' ')
	} else {
		w.buf = append(w.buf, ':')
	}
	w.room(0) // escapes may have grown the key
}

// str writes a string value; when truncating, as much of it as fits.
func (w *jsonWriter) str(v goja.Value) {
	if w.room(strLen(v) + 2) {
		w.buf = appendQuotedValue(w.buf, v)
		w.room(0)
		return
	}
	if rest := w.limit - len(w.buf); w.truncate && rest > 1 {
		w.buf = appendQuotedString(w.buf, truncate(v.String(), rest))
	}
}

// number writes a number as JavaScript formats it (NaN and the infinities as null).
func (w *jsonWriter) number(v goja.Value) {
	f := v.ToFloat()
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		w.raw("null")
	case f == math.Trunc(f) && math.Abs(f) < 1e15:
		if w.room(16) {
			w.buf = strconv.AppendInt(w.buf, int64(f), 10)
		}
	default:
		w.raw(v.String())
	}
}

// raw writes s as it is.
func (w *jsonWriter) raw(s string) {
	if w.room(len(s)) {
		w.buf = append(w.buf, s...)
	}
}

// room reports whether n more bytes fit in the budget; when they do not, it stops the
// writer (truncate) or throws the RangeError that callers classify as output-too-large.
func (w *jsonWriter) room(n int) bool {
	if w.full {
		return false
	}
	if len(w.buf)+n <= w.limit {
		return true
	}
	w.full = true
	if w.truncate {
		return false
	}
	w.sb.tooLarge = true
	w.sb.throwRange("%s: result exceeds the sandbox limit of %d bytes", w.what, w.limit)
	return false
}

// promiseType is what a Promise exports as.
var promiseType = reflect.TypeFor[*goja.Promise]()

// serializeOutput is the native function through which results are serialized into
// sb.out, within sb.outLimit: undefined, functions and symbols become null; a Promise is
// refused. (goja's own JSON.stringify with a budget-keeping replacer was measured too: it
// allocates more and was slower.)
func (sb *sandbox) serializeOutput(call goja.FunctionCall) goja.Value {
	v := call.Argument(0)
	if obj, ok := v.(*goja.Object); ok && obj.ExportType() == promiseType {
		sb.throwType("the result is a Promise: entry points must return their answer synchronously")
	}
	w := jsonWriter{sb: sb, what: "result", buf: sb.out[:0], limit: sb.outLimit, stack: sb.outStack[:0]}
	if !w.property(nil, "", v) {
		w.raw("null")
	}
	sb.out, sb.outStack = w.buf, w.stack[:0]
	return goja.Undefined()
}
