package scripting

import (
	"github.com/dop251/goja"
)

// lockdownSource runs in every new runtime after the Go side has installed the capped
// built-ins and the host helpers, and before the adapter's code. It returns a function that
// the Go side calls with a host object, so that nothing of it stays reachable afterwards.
//
//  1. Code from strings throws, however it is reached: eval, and the constructors of plain,
//     generator and async functions (global Function, and `constructor` of each function
//     prototype, so that (function(){}).constructor('...') throws too). The throwing
//     constructors keep the original prototypes, so instanceof Function still works.
//  2. Globals the sandbox does not offer are deleted: Proxy (traps would run inside the
//     built-ins' Go loops and defeat their caps), BigInt (its arithmetic allocates without
//     bound; BigInt literals are refused at compile time), binary data (typed arrays,
//     ArrayBuffer, DataView: new Uint8Array(2**31) is one uninterruptible allocation) and
//     goja's GoError.
//  3. The common methods scripts assign on their own objects (toString, valueOf,
//     constructor; an error's name and message) become accessors on the frozen prototypes,
//     so that obj.toString = f still defines obj's own property instead of failing (the
//     "override mistake" that freezing otherwise causes).
//  4. (Go, freezeBuiltins) Every built-in reachable from the global object or from syntax is
//     frozen, including the host helpers and the iterator prototypes.
//  5. (Go, freezeBuiltins) The global object itself is frozen: every global binding becomes
//     read-only and no other can be added. The script's top-level declarations live in the
//     scope function (scope.go), never on the global object, so nothing a call does can
//     leave anything on it for the next call.
const lockdownSource = `(function (host) {
	'use strict';
	const G = globalThis;
	const { defineProperty, getPrototypeOf } = Object;

	const FunctionPrototype = Function.prototype;
	const GeneratorFunctionPrototype = getPrototypeOf(function* () {});
	const AsyncFunctionPrototype = getPrototypeOf(async function () {});
	const syntaxOnly = [
		GeneratorFunctionPrototype,
		AsyncFunctionPrototype,
		getPrototypeOf([][Symbol.iterator]()),
		getPrototypeOf(''[Symbol.iterator]()),
		getPrototypeOf(new Map()[Symbol.iterator]()),
		getPrototypeOf(new Set()[Symbol.iterator]()),
		getPrototypeOf(/x/[Symbol.matchAll]('')),
	];

	// 1. No code from strings.
	function disabled(what) {
		return function () {
			throw new EvalError(what + ' is disabled in the sandbox');
		};
	}
	for (const [proto, name] of [
		[FunctionPrototype, 'Function'],
		[GeneratorFunctionPrototype, 'GeneratorFunction'],
		[AsyncFunctionPrototype, 'AsyncFunction'],
	]) {
		const ctor = disabled('the ' + name + ' constructor');
		defineProperty(ctor, 'name', { value: name });
		defineProperty(ctor, 'prototype', { value: proto, writable: false, enumerable: false, configurable: false });
		defineProperty(proto, 'constructor', { value: ctor, writable: false, enumerable: false, configurable: false });
	}
	defineProperty(G, 'Function', { value: FunctionPrototype.constructor });
	defineProperty(G, 'eval', { value: disabled('eval') });

	// 2. What the sandbox does not offer.
	for (const name of host.removed) {
		delete G[name];
	}

	// 3. Assignable methods on frozen prototypes.
	const overridable = [
		[Object.prototype, ['constructor', 'toString', 'toLocaleString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', 'propertyIsEnumerable']],
		[FunctionPrototype, ['toString']],
		[Error.prototype, ['constructor', 'name', 'message', 'toString']],
	];
	for (const E of [TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError]) {
		overridable.push([E.prototype, ['constructor', 'name', 'message']]);
	}
	for (const [obj, names] of overridable) {
		for (const name of names) {
			host.allowOverride(obj, name);
		}
	}

	// 4 and 5 happen in Go (freezeBuiltins), which is much faster at walking: it starts from
	// the global object's properties and from these intrinsics, which only syntax reaches.
	return syntaxOnly;
})`

// removedGlobals are deleted by the lockdown program (see lockdownSource, step 2).
var removedGlobals = []string{
	"Proxy", "BigInt", "GoError", "ArrayBuffer", "SharedArrayBuffer", "DataView", "Atomics",
	"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array",
	"Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
	"WeakRef", "FinalizationRegistry",
}

// lockdownHost is the argument of the lockdown program.
func (sb *sandbox) lockdownHost() goja.Value {
	vm := sb.vm
	removed := make([]any, len(removedGlobals))
	for i, name := range removedGlobals {
		removed[i] = name
	}
	host := vm.NewObject()
	_ = host.Set("removed", vm.NewArray(removed...))
	_ = host.Set("allowOverride", sb.allowOverride)
	return host
}

// allowOverride turns obj[name], a data property, into an accessor pair: the getter returns
// the value; the setter throws when the assignment targets obj itself and otherwise defines
// the property on the object assigned to, as an ordinary assignment would have if obj's
// property were writable.
func (sb *sandbox) allowOverride(call goja.FunctionCall, vm *goja.Runtime) goja.Value {
	obj := call.Argument(0).ToObject(vm)
	name := call.Argument(1).String()
	value := obj.Get(name)
	getter := vm.ToValue(func(goja.FunctionCall) goja.Value { return value })
	setter := vm.ToValue(func(c goja.FunctionCall) goja.Value {
		target, ok := c.This.(*goja.Object)
		if !ok || target == obj {
			sb.throwType("Cannot assign to read only property '%s' of a frozen built-in", name)
		}
		if err := target.DefineDataProperty(name, c.Argument(0), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			sb.throwType("Cannot assign to property '%s': %v", name, err)
		}
		return goja.Undefined()
	})
	if err := obj.DefineAccessorProperty(name, getter, setter, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(vm.NewTypeError("allowOverride " + name + ": " + err.Error()))
	}
	return goja.Undefined()
}

// freezeBuiltins freezes the global object and every object reachable from it or from roots:
// the global bindings become read-only and the global object non-extensible.
func (sb *sandbox) freezeBuiltins(roots []*goja.Object) {
	start := []goja.Value{sb.vm.GlobalObject()}
	for _, r := range roots {
		start = append(start, r)
	}
	sb.freezeReachable(start, nil)
}

// freezeReachable freezes every object reachable from start, through own properties (their
// values and accessors, string and symbol keyed) and prototypes. An object for which stop
// (when set) answers true is neither frozen nor walked into. Functions whose only own
// properties are name and length (the built-in methods) are frozen without looking further.
func (sb *sandbox) freezeReachable(start []goja.Value, stop func(*goja.Object) bool) {
	vm := sb.vm
	object := vm.Get("Object").ToObject(vm)
	freeze := object.Get("freeze").Export().(native)
	describe := object.Get("getOwnPropertyDescriptor").Export().(native)

	seen := make(map[*goja.Object]bool)
	var pending []*goja.Object
	push := func(v goja.Value) {
		if o, ok := v.(*goja.Object); ok && !seen[o] {
			pending = append(pending, o)
		}
	}
	walkKey := func(o *goja.Object, key goja.Value) {
		d := describe(goja.FunctionCall{Arguments: []goja.Value{o, key}}).ToObject(vm)
		push(d.Get("value"))
		push(d.Get("get"))
		push(d.Get("set"))
	}
	for _, v := range start {
		push(v)
	}
	for len(pending) > 0 {
		o := pending[len(pending)-1]
		pending = pending[:len(pending)-1]
		if seen[o] {
			continue
		}
		seen[o] = true
		if stop != nil && stop(o) {
			continue
		}
		freeze(goja.FunctionCall{Arguments: []goja.Value{o}})
		if p := o.Prototype(); p != nil {
			push(p)
		}
		names := o.GetOwnPropertyNames()
		symbols := o.Symbols()
		if len(symbols) == 0 && isMethodShape(names) {
			continue
		}
		for _, name := range names {
			walkKey(o, vm.ToValue(name))
		}
		for _, sym := range symbols {
			walkKey(o, sym)
		}
	}
}

// isMethodShape reports whether a function's own property names are those of a plain method.
func isMethodShape(names []string) bool {
	for _, n := range names {
		if n != "name" && n != "length" {
			return false
		}
	}
	return true
}
