package scripting

import "github.com/dop251/goja"

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

// maxTrackedIterators bounds the step counters one call keeps.
const maxTrackedIterators = 1024

// installIteratorCaps caps every built-in iterator: one iterator may take at most
// ArrayLength+1 steps in a call (the last one reports done). A spread, Array.from, new Set,
// Promise.all or destructuring drives its iterator from a Go loop that the deadline cannot
// interrupt: measured, Array.from of a 1 MiB string took 3.4 s and a spread of an array
// with a[4e9] = 1 never returned. Within the cap, each step also ends the call when its
// deadline has passed (an atomic load): a spread of 65,536 regexp matches took 230 ms, far
// past a prepare deadline, and one step of a regexp match iterator may be a scan of up to
// regexpScanLimit. This also covers `arguments`, whose iterator is goja's original values
// function. A for-of loop over a longer sequence fails too, as it would at its deadline
// anyway.
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
					n, seen := sb.iterSteps[obj]
					if !seen && len(sb.iterSteps) >= maxTrackedIterators {
						// Only JavaScript code starts new iterators between steps, and
						// JavaScript code is interruptible: forgetting counts is safe.
						clear(sb.iterSteps)
					}
					n++
					sb.iterSteps[obj] = n
					if n > sb.p.limits.ArrayLength+1 {
						sb.throwRange("iterator: more than %d steps exceeds the sandbox limit", sb.p.limits.ArrayLength)
					}
					sb.checkAlarm()
				}
				return orig(call)
			}
		})
	}
}
