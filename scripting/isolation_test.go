package scripting

import (
	"encoding/json"
	"strings"
	"testing"
)

// leakyScript tries every way it knows to carry one message's recipient into a later call:
// state its top-level code built (a var array, a let object, objects held by constants, a let
// binding, a class's property, a closure's counter) and shared objects (the global object,
// an undeclared name, the top-level `this`, the prototypes, the host helpers, built-in
// functions). leaked is what it finds of earlier calls; errors names the exception each
// write attempt threw.
const leakyScript = `
var seen = [];
let state = {};
const table = {codes: []};
let lastRecipient = null;
class Memo {}
const topThis = this;
const counter = (function () { let n = 0; return function () { return n++; }; })();
var nested = {inner: {list: []}};

function prepare(message, profile) {
	const r = message.recipient;
	const leaked = [
		seen.slice(), state.last, table.codes.slice(), lastRecipient, Memo.last, nested.inner.list.slice(),
		globalThis.stash, typeof undeclaredStash === 'undefined' ? null : undeclaredStash, topThis.stash3,
		({}).leak, [].leak, encoding.leak, JSON.stringify.leak, Object.getOwnPropertyNames(globalThis).filter(n => n.startsWith('stash')),
	];
	const count = counter();
	const errors = {};
	const attempt = (name, fn) => { try { fn() } catch (e) { errors[name] = e.name } };
	attempt('var array', () => seen.push(r));
	attempt('let object', () => { state.last = r });
	attempt('object held by a constant', () => table.codes.push(r));
	attempt('let binding', () => { lastRecipient = r });
	attempt('class property', () => { Memo.last = r });
	attempt('nested object', () => nested.inner.list.push(r));
	attempt('globalThis', () => { globalThis.stash = r });
	attempt('undeclared name', () => { undeclaredStash = r });
	attempt('top-level this', () => { topThis.stash3 = r });
	attempt('defineProperty on globalThis', () => Object.defineProperty(globalThis, 'stash4', {value: r}));
	attempt('Object.prototype', () => { Object.prototype.leak = r });
	attempt('Array.prototype', () => { Array.prototype.leak = r });
	attempt('host helper', () => { encoding.leak = r });
	attempt('built-in function', () => { JSON.stringify.leak = r });
	attempt('setPrototypeOf globalThis', () => Object.setPrototypeOf(globalThis, {stash5: r}));
	return {to: r, leaked: leaked, count: count, errors: errors};
}

function uncaught(message) { globalThis.stash = message.recipient }`

// TestCallsAreIndependent: nothing one call does, whatever it tries, reaches a later call.
// Writes to the call's own top-level state succeed and die with the call; writes to what
// calls share (the global object, the built-ins) throw.
func TestCallsAreIndependent(t *testing.T) {
	t.Parallel()
	p := newProgram(t, leakyScript, []string{"prepare", "uncaught"})
	type answer struct {
		To     string            `json:"to"`
		Leaked []any             `json:"leaked"`
		Count  int               `json:"count"`
		Errors map[string]string `json:"errors"`
	}
	first, second := "+15550100001", "+15550100002"
	if _, err := call(t, p, "uncaught", map[string]any{"recipient": first}); ClassOf(err) != ClassFailed || !strings.Contains(err.Error(), "TypeError") {
		t.Errorf("uncaught write to globalThis: %v, want a TypeError", err)
	}
	var answers []answer
	for _, r := range []string{first, second, second} {
		raw := mustCall(t, p, "prepare", map[string]any{"recipient": r, "parts": map[string]any{"text": "hi"}}, map[string]any{"sender": "x"})
		if strings.Contains(raw, first) && r != first {
			t.Errorf("a later call saw the first recipient: %s", raw)
		}
		var a answer
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatal(err)
		}
		answers = append(answers, a)
	}
	want := map[string]string{
		"globalThis": "TypeError", "undeclared name": "ReferenceError", "top-level this": "TypeError",
		"defineProperty on globalThis": "TypeError", "Object.prototype": "TypeError", "Array.prototype": "TypeError",
		"host helper": "TypeError", "built-in function": "TypeError", "setPrototypeOf globalThis": "TypeError",
	}
	for i, a := range answers {
		leaked, _ := json.Marshal(a.Leaked)
		if string(leaked) != `[[],null,[],null,null,[],null,null,null,null,null,null,null,[]]` {
			t.Errorf("call %d found %s of earlier calls", i+1, leaked)
		}
		if a.Count != 0 {
			t.Errorf("call %d: the closure counter is at %d", i+1, a.Count)
		}
		if len(a.Errors) != len(want) {
			t.Errorf("call %d: errors %v, want %v (and the writes to its own state to succeed)", i+1, a.Errors, want)
		}
		for name, class := range want {
			if a.Errors[name] != class {
				t.Errorf("call %d: %s threw %q, want %s", i+1, name, a.Errors[name], class)
			}
		}
	}
}

// frozenLeakyScript tries to carry the recipient into a later call through what its top-level
// code built, in a script whose one top-level run serves every call (reusableScope): every
// write must throw, and every read must find nothing.
const frozenLeakyScript = `
'use strict';
var seen = [];
let state = {last: null};
const table = {codes: [], nested: {list: []}};
function Memo() {}
const helpers = {remember: function (r) { this.last = r }, get size() { return seen.length }};
const scopeArguments = () => arguments;

function prepare(message) {
	const r = message.recipient;
	const leaked = [seen.slice(), state.last, table.codes.slice(), table.nested.list.slice(), Memo.last || null,
		Memo.prototype.last || null, prepare.last || null, helpers.last || null, helpers.size, scopeArguments()[0] || null,
		globalThis.stash || null, ({}).leak || null, [].leak || null];
	const errors = {};
	const attempt = (name, fn) => { try { fn() } catch (e) { errors[name] = e.name } };
	attempt('var array', () => seen.push(r));
	attempt('let object', () => { state.last = r });
	attempt('object held by a constant', () => table.codes.push(r));
	attempt('nested object', () => table.nested.list.push(r));
	attempt('function property', () => { Memo.last = r });
	attempt('function prototype', () => { Memo.prototype.last = r });
	attempt('entry point property', () => { prepare.last = r });
	attempt('method on a table', () => helpers.remember(r));
	attempt('defineProperty on a table', () => Object.defineProperty(seen, 'stash', {value: r}));
	attempt('setPrototypeOf a table', () => Object.setPrototypeOf(state, {last: r}));
	attempt('the scope arguments', () => { scopeArguments()[0] = r });
	attempt('globalThis', () => { globalThis.stash = r });
	attempt('undeclared name', () => { undeclaredStash = r });
	attempt('Object.prototype', () => { Object.prototype.leak = r });
	attempt('Array.prototype', () => { Array.prototype.leak = r });
	return {to: r, leaked: leaked, errors: errors};
}`

// TestReusedScopeIsFrozen: a script whose top-level code runs once per runtime cannot carry
// anything from one call to the next either: each write throws.
func TestReusedScopeIsFrozen(t *testing.T) {
	t.Parallel()
	p := newProgram(t, frozenLeakyScript, []string{"prepare"})
	if !p.reuse {
		t.Fatal("the script runs its top-level code for every call; this test is about the other path")
	}
	first, second := "+15550100001", "+15550100002"
	for i, r := range []string{first, second, second} {
		raw := mustCall(t, p, "prepare", map[string]any{"recipient": r})
		if i > 0 && strings.Contains(raw, first) {
			t.Errorf("call %d saw the first recipient: %s", i+1, raw)
		}
		var a struct {
			Leaked []any             `json:"leaked"`
			Errors map[string]string `json:"errors"`
		}
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatal(err)
		}
		if leaked, _ := json.Marshal(a.Leaked); string(leaked) != `[[],null,[],[],null,null,null,null,0,null,null,null,null]` {
			t.Errorf("call %d found %s of earlier calls", i+1, leaked)
		}
		for _, name := range []string{"var array", "let object", "object held by a constant", "nested object",
			"function property", "function prototype", "entry point property", "method on a table",
			"defineProperty on a table", "setPrototypeOf a table", "the scope arguments", "globalThis",
			"Object.prototype", "Array.prototype"} {
			if a.Errors[name] != "TypeError" {
				t.Errorf("call %d: %s threw %q, want TypeError", i+1, name, a.Errors[name])
			}
		}
		if a.Errors["undeclared name"] != "ReferenceError" || len(a.Errors) != 15 {
			t.Errorf("call %d: errors %v", i+1, a.Errors)
		}
	}
	if s := p.Stats(); s.RuntimesCreated != 1 {
		t.Errorf("stats %+v: the calls did not share their runtime", s)
	}
}

// TestReusableScope: which scripts run their top-level code once per runtime rather than once
// per call. A wrong "yes" would let calls share state; a wrong "no" only costs time.
func TestReusableScope(t *testing.T) {
	t.Parallel()
	const fn = "\nfunction prepare(m) { return m }\n"
	for _, tc := range []struct {
		name, src string
		reuse     bool
	}{
		{"functions only", fn, true},
		{"tables of literals", `var A = {x: "1", y: [1, 2, {z: null}]}; let B = -1; const C = "a" + "b" + ` + "`c`" + `;` + fn, true},
		{"tables of functions and references", `const T = {f: function () {}, g: () => 1, h() {}, get i() { return 1 }, [1 + 1]: A}; var A = T, U = undefined;` + fn, true},
		{"directive and empty statements", `'use strict';;` + fn, true},
		{"a bundled-style adapter", quickstartPrepare + `var REPORTS = {delivered: "delivered"}; function interpret(r) { var s = r.status; s = s + 1; return REPORTS[s] }`, true},
		{"a local shadowing a top-level name is assigned", `var n = 0;` + fn + `function f() { var n; n = 1 }`, false},
		{"assignment to a top-level name", `var last = null;` + fn + `function f(r) { last = r }`, false},
		{"compound assignment", `let n = 0;` + fn + `function f() { n += 1 }`, false},
		{"increment", `let n = 0;` + fn + `function f() { return n++ }`, false},
		{"destructuring assignment", `let a, b;` + fn + `function f(o) { [a, {b}] = o }`, false},
		{"for-of over a top-level name", `let x;` + fn + `function f(o) { for (x of o) {} }`, false},
		{"reassigned function", fn + `function f() { prepare = null }`, false},
		{"a closure counter", `const next = (function () { let n = 0; return () => n++ })();` + fn, false},
		{"a call", `console.log('loading');` + fn, false},
		{"new", `const M = new Map();` + fn, false},
		{"a regular expression", `const RE = /x/;` + fn, false},
		{"a class", `class C {}` + fn, false},
		{"this", `const G = this;` + fn, false},
		{"a member", `const PI = Math.PI;` + fn, false},
		{"an operator over a reference", `var A = 1, B = A + 1;` + fn, false},
		{"a spread", `var A = [...'ab'];` + fn, false},
		{"a tagged template", "var A = String.raw`x`;" + fn, false},
		{"a destructuring declaration", `const {a} = {a: 1};` + fn, false},
		{"a statement", `if (true) {}` + fn, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newProgram(t, tc.src, []string{"prepare"})
			if p.reuse != tc.reuse {
				t.Errorf("reuse = %v, want %v", p.reuse, tc.reuse)
			}
		})
	}
}
