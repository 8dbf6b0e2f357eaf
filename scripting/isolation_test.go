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
