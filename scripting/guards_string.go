package scripting

import (
	"math"
	"strconv"

	"github.com/dop251/goja"
)

// The string caps. goja's string built-ins allocate their whole result in one Go call that
// the deadline cannot interrupt ('x'.repeat(2**30) allocates a GiB before anything can
// stop it), so each built-in that can produce more than its input checks the length of its
// result against Limits.StringBytes first. Each replacement converts its arguments once and
// hands the converted values to the original, so user toString/valueOf methods run once, as
// the specification says.

// installStringGuards caps String.prototype.repeat, padStart, padEnd, concat, replace,
// replaceAll, RegExp.prototype[Symbol.replace] and String.raw.
func (sb *sandbox) installStringGuards() {
	vm := sb.vm
	str := vm.Get("String").ToObject(vm)
	proto := str.Get("prototype").ToObject(vm)

	sb.replaceMethod(proto, "repeat", func(orig native) native {
		return func(call goja.FunctionCall) goja.Value {
			if isNullish(call.This) {
				return orig(call)
			}
			s := call.This.ToString()
			n := call.Argument(0).ToFloat()
			if l := strLen(s); l > 0 && n > 0 && !math.IsInf(n, 1) {
				sb.checkString("String.prototype.repeat", float64(l)*math.Floor(n))
			}
			return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{vm.ToValue(n)}})
		}
	})
	for _, name := range []string{"padStart", "padEnd"} {
		what := "String.prototype." + name
		sb.replaceMethod(proto, name, func(orig native) native {
			return func(call goja.FunctionCall) goja.Value {
				if isNullish(call.This) {
					return orig(call)
				}
				s := call.This.ToString()
				target := toLength(call.Argument(0).ToFloat())
				fill := call.Argument(1)
				if !goja.IsUndefined(fill) {
					fill = fill.ToString()
				}
				if target > float64(strLen(s)) && (goja.IsUndefined(fill) || strLen(fill) > 0) {
					sb.checkString(what, target)
				}
				return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{vm.ToValue(target), fill}})
			}
		})
	}
	sb.replaceMethod(proto, "concat", func(orig native) native {
		return func(call goja.FunctionCall) goja.Value {
			if isNullish(call.This) {
				return orig(call)
			}
			s := call.This.ToString()
			total := float64(strLen(s))
			args := make([]goja.Value, len(call.Arguments))
			for i, a := range call.Arguments {
				args[i] = a.ToString()
				total += float64(strLen(args[i]))
				sb.checkString("String.prototype.concat", total)
			}
			return orig(goja.FunctionCall{This: s, Arguments: args})
		}
	})
	sb.replaceMethod(proto, "replace", func(orig native) native { return sb.stringReplace(orig, false) })
	sb.replaceMethod(proto, "replaceAll", func(orig native) native { return sb.stringReplace(orig, true) })
	regexpProto := vm.Get("RegExp").ToObject(vm).Get("prototype").ToObject(vm)
	sb.replaceSymbolMethod(regexpProto, goja.SymReplace, sb.regexpReplace)
	sb.replaceMethod(str, "raw", func(native) native { return sb.stringRaw })
}

// stringRaw is String.raw, building its result with the cap.
func (sb *sandbox) stringRaw(call goja.FunctionCall) goja.Value {
	const what = "String.raw"
	vm := sb.vm
	literals := call.Argument(0).ToObject(vm).Get("raw")
	if isNullish(literals) {
		sb.throwType("%s: the template has no raw strings", what)
	}
	n := sb.lengthOf(literals)
	sb.checkLength(what, n)
	subs := call.Arguments[min(1, len(call.Arguments)):]
	parts := make([]any, 0, 2*int(n))
	var total float64
	add := func(v goja.Value) {
		s := v.ToString()
		total += float64(strLen(s))
		sb.checkString(what, total)
		parts = append(parts, s)
	}
	lit := literals.ToObject(vm)
	for i := 0; i < int(n); i++ {
		add(lit.Get(strconv.Itoa(i)))
		if i+1 < int(n) && i < len(subs) {
			add(subs[i])
		}
	}
	return sb.join(goja.FunctionCall{This: vm.NewArray(parts...), Arguments: []goja.Value{vm.ToValue("")}})
}

// toLength is ToLength on a number.
func toLength(f float64) float64 {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f > 1<<53-1:
		return 1<<53 - 1
	}
	return math.Floor(f)
}
