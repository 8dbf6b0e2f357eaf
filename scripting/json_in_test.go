package scripting

import (
	"slices"
	"testing"

	"github.com/dop251/goja"
)

// describeSource returns, for an object, its prototype's identity, its own keys in order and
// each own property's descriptor, as JSON.
const describeSource = `(function (o) {
	'use strict';
	const keys = Reflect.ownKeys(o);
	return JSON.stringify({
		plain: Object.getPrototypeOf(o) === Object.prototype,
		keys: keys,
		props: keys.map(function (k) {
			const d = Object.getOwnPropertyDescriptor(o, k);
			return [typeof d.value, String(d.value), d.writable, d.enumerable, d.configurable];
		}),
	});
})`

// TestArgObjectMatchesDefine: an argument object (newArgObject, assignments, then
// finishArgObject) is the object Object.defineProperty would build on a fresh plain object:
// the same prototype, keys in the same order, the same descriptors, for every name of
// Object.prototype (__proto__ included) as well as ordinary and index-like names.
func TestArgObjectMatchesDefine(t *testing.T) {
	p := newProgram(t, `function f() { return null }`, []string{"f"})
	sb, err := newSandbox(p)
	if err != nil {
		t.Fatal(err)
	}
	vm := sb.vm
	describeValue, err := vm.RunString(describeSource)
	if err != nil {
		t.Fatal(err)
	}
	describe, _ := goja.AssertFunction(describeValue)
	names := []string{"a", "b", "10", "2", "", "length", "prototype", "then", "toJSON"}
	names = append(names, sb.objectPrototype.GetOwnPropertyNames()...)
	if !slices.Contains(names, "__proto__") || !slices.Contains(names, "toString") {
		t.Fatalf("Object.prototype's names: %v", names)
	}
	byArg, byDefine := sb.newArgObject(), vm.NewObject()
	for i, name := range names {
		value := vm.ToValue(i)
		if name == "__proto__" {
			value = vm.NewObject() // an object, which __proto__'s setter would make the prototype
		}
		if err := byArg.Set(name, value); err != nil {
			t.Fatal(err)
		}
		if err := byDefine.DefineDataProperty(name, value, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE); err != nil {
			t.Fatal(err)
		}
	}
	finished, err := sb.finishArgObject(byArg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := describe(goja.Undefined(), finished)
	if err != nil {
		t.Fatal(err)
	}
	want, err := describe(goja.Undefined(), byDefine)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("the argument object is\n%s\nObject.defineProperty builds\n%s", got, want)
	}
}
