package scripting

import (
	"strconv"

	"github.com/dop251/goja"
)

// The array caps. goja's built-ins run as uninterruptible Go loops over an array's length,
// and an array's length costs nothing to inflate (`a.length = 4e9`, `a[4e9] = 1`,
// `{length: 2**53 - 1}`), so every built-in that walks or creates elements checks the length
// against Limits.ArrayLength before it starts. Measured without these caps: `[...a]` or
// `a.indexOf(x)` on such an array hangs the goroutine for good, and
// `Math.max.apply(null, {length: 1e9})` kills the process with an out-of-memory fatal error.

// arrayMethods are the Array.prototype methods whose cost grows with this.length.
// join and toLocaleString have their own implementation (arrayJoin); keys, values, entries
// and Symbol.iterator are covered by the iterators' step cap (installIteratorCaps).
var arrayMethods = []string{
	"at", "copyWithin", "every", "fill", "filter", "find", "findIndex", "findLast",
	"findLastIndex", "forEach", "includes", "indexOf", "lastIndexOf", "map", "pop", "reduce",
	"reduceRight", "reverse", "shift", "slice", "some", "sort", "toReversed", "toSorted", "with",
}

// installArrayGuards caps Array.prototype, Array.from, apply and Reflect.
func (sb *sandbox) installArrayGuards() {
	vm := sb.vm
	array := vm.Get("Array").ToObject(vm)
	proto := array.Get("prototype").ToObject(vm)

	for _, name := range arrayMethods {
		what := "Array.prototype." + name
		sb.replaceMethod(proto, name, func(orig native) native {
			return func(call goja.FunctionCall) goja.Value {
				if !isNullish(call.This) {
					sb.checkLength(what, sb.lengthOf(call.This))
				}
				return orig(call)
			}
		})
	}
	// Methods that add their arguments: the result length is this.length + arguments.
	for _, name := range []string{"push", "unshift", "splice", "toSpliced"} {
		what := "Array.prototype." + name
		sb.replaceMethod(proto, name, func(orig native) native {
			return func(call goja.FunctionCall) goja.Value {
				if !isNullish(call.This) {
					sb.checkLength(what, sb.lengthOf(call.This)+float64(len(call.Arguments)))
				}
				return orig(call)
			}
		})
	}
	sb.replaceMethod(proto, "concat", sb.arrayConcat)
	sb.replaceMethod(proto, "flat", sb.arrayFlat)
	sb.replaceMethod(proto, "flatMap", sb.arrayFlatMap)
	sb.replaceMethod(proto, "join", func(native) native { return sb.arrayJoin(false) })
	sb.replaceMethod(proto, "toLocaleString", func(native) native { return sb.arrayJoin(true) })

	sb.replaceMethod(array, "from", func(orig native) native {
		return func(call goja.FunctionCall) goja.Value {
			items := call.Argument(0)
			if !isNullish(items) {
				if it := items.ToObject(vm).GetSymbol(goja.SymIterator); isNullish(it) {
					sb.checkLength("Array.from", sb.lengthOf(items))
				}
			}
			return orig(call)
		}
	})

	// The argument lists of apply and Reflect are array-likes copied by a Go loop.
	argList := func(what string, index int) func(native) native {
		return func(orig native) native {
			return func(call goja.FunctionCall) goja.Value {
				if args := call.Argument(index); !isNullish(args) {
					if _, ok := args.(*goja.Object); ok {
						sb.checkLength(what, sb.lengthOf(args))
					}
				}
				return orig(call)
			}
		}
	}
	funcProto := vm.Get("Function").ToObject(vm).Get("prototype").ToObject(vm)
	sb.replaceMethod(funcProto, "apply", argList("Function.prototype.apply", 1))
	reflect := vm.Get("Reflect").ToObject(vm)
	sb.replaceMethod(reflect, "apply", argList("Reflect.apply", 2))
	sb.replaceMethod(reflect, "construct", argList("Reflect.construct", 1))

}

// iteratorPrototypesSource evaluates to the prototypes of the built-in iterators whose next
// method runs in Go.
const iteratorPrototypesSource = `(() => {
	'use strict';
	const P = Object.getPrototypeOf;
	return [
		P([][Symbol.iterator]()),
		P(''[Symbol.iterator]()),
		P(new Map()[Symbol.iterator]()),
		P(new Set()[Symbol.iterator]()),
		P(/x/g[Symbol.matchAll]('')),
	];
})()`

// installIteratorCaps caps every built-in iterator: one iterator may take at most
// ArrayLength+1 steps in a call (the last one reports done). A spread, Array.from, new Set,
// Promise.all or destructuring drives its iterator from a Go loop that the deadline cannot
// interrupt: measured, Array.from of a 1 MiB string took 3.4 s and a spread of an array
// with a[4e9] = 1 never returned. This also covers `arguments`, whose iterator is goja's
// original values function. A for-of loop over a longer sequence fails too, as it would
// at its deadline anyway.
func (sb *sandbox) installIteratorCaps() {
	vm := sb.vm
	protos, err := vm.RunProgram(sb.p.iterators)
	if err != nil {
		panic(err)
	}
	var list []*goja.Object
	if err := vm.ExportTo(protos, &list); err != nil {
		panic(err)
	}
	for _, proto := range list {
		sb.replaceMethod(proto, "next", func(orig native) native {
			return func(call goja.FunctionCall) goja.Value {
				if obj, ok := call.This.(*goja.Object); ok {
					n := sb.iterSteps[obj] + 1
					sb.iterSteps[obj] = n
					if n > sb.p.limits.ArrayLength+1 {
						sb.throwRange("iterator: more than %d steps exceeds the sandbox limit", sb.p.limits.ArrayLength)
					}
				}
				return orig(call)
			}
		})
	}
}

// arrayConcat checks the length of the result of concat before building it.
func (sb *sandbox) arrayConcat(orig native) native {
	return func(call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return orig(call)
		}
		total := sb.concatLength(call.This)
		for _, arg := range call.Arguments {
			total += sb.concatLength(arg)
			sb.checkLength("Array.prototype.concat", total)
		}
		sb.checkLength("Array.prototype.concat", total)
		return orig(call)
	}
}

// concatLength is how many elements v contributes to concat: its length when spreadable.
func (sb *sandbox) concatLength(v goja.Value) float64 {
	obj, ok := v.(*goja.Object)
	if !ok {
		return 1
	}
	spreadable := obj.ClassName() == "Array"
	if s := obj.GetSymbol(goja.SymIsConcatSpreadable); !isNullish(s) {
		spreadable = s.ToBoolean()
	}
	if !spreadable {
		return 1
	}
	return sb.lengthOf(obj)
}

// arrayFlat counts the flattened result (holes included, so it may over-count) before flat
// builds it, and bounds the nesting it walks by CallStackFrames.
func (sb *sandbox) arrayFlat(orig native) native {
	return func(call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return orig(call)
		}
		depth := 1.0
		if d := call.Argument(0); !goja.IsUndefined(d) {
			depth = d.ToFloat()
			call.Arguments = []goja.Value{sb.vm.ToValue(depth)} // converted once, as flat would
		}
		var count float64
		sb.countFlat(call.This.ToObject(sb.vm), depth, 0, &count)
		return orig(call)
	}
}

// countFlat adds to count the elements flat would produce from obj at the given depth.
func (sb *sandbox) countFlat(obj *goja.Object, depth float64, level int, count *float64) {
	if level >= sb.p.limits.CallStackFrames {
		sb.throwRange("Array.prototype.flat: nesting deeper than %d", sb.p.limits.CallStackFrames)
	}
	n := sb.lengthOf(obj)
	sb.checkLength("Array.prototype.flat", n)
	for i := 0; i < int(n); i++ {
		el := obj.Get(strconv.Itoa(i))
		if inner, ok := el.(*goja.Object); ok && depth >= 1 && inner.ClassName() == "Array" {
			sb.countFlat(inner, depth-1, level+1, count)
			continue
		}
		*count++
		sb.checkLength("Array.prototype.flat", *count)
	}
}

// arrayFlatMap counts what the callback returns as flatMap goes.
func (sb *sandbox) arrayFlatMap(orig native) native {
	return func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if isNullish(call.This) || !ok {
			return orig(call) // throws the TypeError flatMap would
		}
		sb.checkLength("Array.prototype.flatMap", sb.lengthOf(call.This))
		var count float64
		counted := sb.vm.ToValue(func(inner goja.FunctionCall) goja.Value {
			v := callJS(fn, inner.This, inner.Arguments...)
			if obj, ok := v.(*goja.Object); ok && obj.ClassName() == "Array" {
				count += sb.lengthOf(obj)
			} else {
				count++
			}
			sb.checkLength("Array.prototype.flatMap", count)
			return v
		})
		args := append([]goja.Value{counted}, call.Arguments[1:]...)
		return orig(goja.FunctionCall{This: call.This, Arguments: args})
	}
}

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
