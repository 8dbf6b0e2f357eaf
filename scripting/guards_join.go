package scripting

import (
	"strconv"

	"github.com/dop251/goja"
)

// arrayJoin is Array.prototype.join (and, with locale, toLocaleString) with the string cap,
// a nesting cap and V8's answer for cycles (an array already being joined joins as ""). It
// converts every element once, then lets goja's original join concatenate the strings.
func (sb *sandbox) arrayJoin(locale bool) native {
	join := sb.join
	const what = "Array.prototype.join"
	return func(call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return join(call) // throws the TypeError join would
		}
		vm := sb.vm
		obj := call.This.ToObject(vm)
		n := sb.lengthOf(obj)
		sb.checkLength(what, n)
		sep := vm.ToValue(",")
		if s := call.Argument(0); !locale && !goja.IsUndefined(s) {
			sep = s.ToString()
		}
		for _, seen := range sb.joinStack {
			if seen == obj {
				return vm.ToValue("")
			}
		}
		if len(sb.joinStack) >= sb.p.limits.CallStackFrames {
			sb.throwRange("%s: nesting deeper than %d", what, sb.p.limits.CallStackFrames)
		}
		sb.joinStack = append(sb.joinStack, obj)
		defer func() { sb.joinStack = sb.joinStack[:len(sb.joinStack)-1] }()

		parts := make([]any, int(n))
		total := float64(strLen(sep)) * max(n-1, 0)
		sb.checkString(what, total)
		for i := range parts {
			el := obj.Get(strconv.Itoa(i))
			var s goja.Value = vm.ToValue("")
			switch {
			case isNullish(el):
			case locale:
				s = sb.invokeToLocaleString(el)
			default:
				s = el.ToString()
			}
			total += float64(strLen(s))
			sb.checkString(what, total)
			parts[i] = s
		}
		return join(goja.FunctionCall{This: vm.NewArray(parts...), Arguments: []goja.Value{sep}})
	}
}

// invokeToLocaleString calls el.toLocaleString() and converts the answer to a string.
func (sb *sandbox) invokeToLocaleString(el goja.Value) goja.Value {
	fn, ok := goja.AssertFunction(el.ToObject(sb.vm).Get("toLocaleString"))
	if !ok {
		sb.throwType("toLocaleString is not a function")
	}
	return callJS(fn, el).ToString()
}
