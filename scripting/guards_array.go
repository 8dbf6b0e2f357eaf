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
//
// A real Array's length is a plain number that only the script's own (interruptible) code
// can change. An array-like's length may be a getter, or an object whose valueOf answers
// differently each time, so that the original built-in would read a different length than
// the one checked. The guards therefore hand the original an array-like whose length is
// fixed (withFixedLength), or for argument lists a real array copy; the mutating methods
// refuse array-likes outright rather than write to such a stand-in.

// arrayReaders are the Array.prototype methods that walk this (up to its length) without
// changing it. join and toLocaleString have their own implementation (arrayJoin); keys,
// values, entries and Symbol.iterator are covered by the iterators' step cap.
var arrayReaders = []string{
	"at", "every", "filter", "find", "findIndex", "findLast", "findLastIndex", "forEach",
	"includes", "indexOf", "lastIndexOf", "map", "reduce", "reduceRight", "slice", "some",
	"toReversed", "toSorted", "toSpliced", "with",
}

// arrayWriters change this; the value is whether the arguments add to its length.
var arrayWriters = map[string]bool{
	"copyWithin": false, "fill": false, "pop": false, "reverse": false, "shift": false,
	"sort": false, "push": true, "unshift": true, "splice": true,
}

// installArrayGuards caps Array.prototype, Array.from, apply and Reflect.
func (sb *sandbox) installArrayGuards() {
	vm := sb.vm
	array := vm.Get("Array").ToObject(vm)
	proto := array.Get("prototype").ToObject(vm)

	for _, name := range arrayReaders {
		what := "Array.prototype." + name
		adds := name == "toSpliced"
		sb.replaceMethod(proto, name, func(orig native) native {
			return func(call goja.FunctionCall) goja.Value {
				if !isNullish(call.This) {
					extra := 0.0
					if adds {
						extra = float64(len(call.Arguments))
					}
					call.This = sb.checkedArrayLike(what, call.This, extra)
				}
				return orig(call)
			}
		})
	}
	for name, adds := range arrayWriters {
		what := "Array.prototype." + name
		sb.replaceMethod(proto, name, func(orig native) native {
			return func(call goja.FunctionCall) goja.Value {
				if !isNullish(call.This) {
					obj := call.This.ToObject(vm)
					if obj.ClassName() != "Array" {
						sb.throwType("%s: the sandbox supports it on arrays only, not on array-likes", what)
					}
					extra := 0.0
					if adds {
						extra = float64(len(call.Arguments))
					}
					sb.checkLength(what, sb.lengthOf(obj)+extra)
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
					args := append([]goja.Value{sb.checkedArrayLike("Array.from", items, 0)}, call.Arguments[1:]...)
					call.Arguments = args
				}
			}
			return orig(call)
		}
	})

	// The argument lists of apply and Reflect are array-likes copied by a Go loop.
	argList := func(what string, index int) func(native) native {
		return func(orig native) native {
			return func(call goja.FunctionCall) goja.Value {
				if index < len(call.Arguments) {
					if obj, ok := call.Arguments[index].(*goja.Object); ok {
						args := append([]goja.Value(nil), call.Arguments...)
						args[index] = sb.arrayCopy(what, obj)
						call.Arguments = args
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

// checkedArrayLike checks the length of v (plus extra) and returns what the original
// built-in should walk: v itself when it is an Array, else withFixedLength.
func (sb *sandbox) checkedArrayLike(what string, v goja.Value, extra float64) goja.Value {
	obj := v.ToObject(sb.vm)
	n := sb.lengthOf(obj)
	sb.checkLength(what, n+extra)
	if obj.ClassName() == "Array" {
		return v
	}
	return sb.withFixedLength(obj, n)
}

// withFixedLength is a stand-in for the array-like obj: an object that inherits everything
// from obj but has its own plain length n.
func (sb *sandbox) withFixedLength(obj *goja.Object, n float64) *goja.Object {
	w := sb.vm.NewObject()
	if err := w.SetPrototype(obj); err != nil {
		sb.throwType("%v", err)
	}
	w.DefineDataProperty("length", sb.vm.ToValue(n), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE)
	return w
}

// arrayCopy is the array obj when it is one, else a real array of its elements, after
// checking the length.
func (sb *sandbox) arrayCopy(what string, obj *goja.Object) goja.Value {
	n := sb.lengthOf(obj)
	sb.checkLength(what, n)
	if obj.ClassName() == "Array" {
		return obj
	}
	items := make([]any, int(n))
	for i := range items {
		items[i] = obj.Get(strconv.Itoa(i))
	}
	return sb.vm.NewArray(items...)
}

// arrayConcat checks the length of the result of concat before building it.
func (sb *sandbox) arrayConcat(orig native) native {
	const what = "Array.prototype.concat"
	return func(call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return orig(call)
		}
		var total float64
		this := sb.concatPart(call.This.ToObject(sb.vm), &total)
		args := make([]goja.Value, len(call.Arguments))
		for i, arg := range call.Arguments {
			args[i] = sb.concatPart(arg, &total)
			sb.checkLength(what, total)
		}
		sb.checkLength(what, total)
		return orig(goja.FunctionCall{This: this, Arguments: args})
	}
}

// concatPart adds to total how many elements v contributes to concat (its length when it
// is spreadable, else 1) and returns what concat should be given in its place.
func (sb *sandbox) concatPart(v goja.Value, total *float64) goja.Value {
	obj, ok := v.(*goja.Object)
	if !ok {
		*total++
		return v
	}
	spreadable := obj.ClassName() == "Array"
	if s := obj.GetSymbol(goja.SymIsConcatSpreadable); !isNullish(s) {
		spreadable = s.ToBoolean()
	}
	if !spreadable {
		*total++
		return v
	}
	n := sb.lengthOf(obj)
	*total += n
	sb.checkLength("Array.prototype.concat", *total)
	if obj.ClassName() == "Array" {
		return v
	}
	return sb.withFixedLength(obj, n)
}

// arrayFlat counts the flattened result (holes included, so it may over-count) before flat
// builds it, and bounds the nesting it walks by CallStackFrames. Only real Arrays are
// flattened, so only the top level can be an array-like.
func (sb *sandbox) arrayFlat(orig native) native {
	const what = "Array.prototype.flat"
	return func(call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return orig(call)
		}
		depth := 1.0
		if d := call.Argument(0); !goja.IsUndefined(d) {
			depth = d.ToFloat() // converted once, as flat would
		}
		this := sb.checkedArrayLike(what, call.This, 0).ToObject(sb.vm)
		var count float64
		sb.countFlat(this, depth, 0, &count)
		return orig(goja.FunctionCall{This: this, Arguments: []goja.Value{sb.vm.ToValue(depth)}})
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
	const what = "Array.prototype.flatMap"
	return func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if isNullish(call.This) || !ok {
			return orig(call) // throws the TypeError flatMap would
		}
		this := sb.checkedArrayLike(what, call.This, 0)
		var count float64
		counted := sb.vm.ToValue(func(inner goja.FunctionCall) goja.Value {
			v := callJS(fn, inner.This, inner.Arguments...)
			if obj, ok := v.(*goja.Object); ok && obj.ClassName() == "Array" {
				count += sb.lengthOf(obj)
			} else {
				count++
			}
			sb.checkLength(what, count)
			return v
		})
		args := append([]goja.Value{counted}, call.Arguments[1:]...)
		return orig(goja.FunctionCall{This: this, Arguments: args})
	}
}
