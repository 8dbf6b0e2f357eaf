package scripting

import (
	"strings"
	"testing"
	"time"
)

// maxAdversarialTime bounds every adversarial call. A call may overrun its deadline by one
// uninterruptible built-in walk, bounded by the caps; the race detector slows those down
// severalfold. (Calls not expected to hit their deadline get generousDeadline, so a failure
// here means a cap did not hold.)
const maxAdversarialTime = generousDeadline

// TestAdversarialScripts runs scripts that try to hang, exhaust memory or escape the sandbox.
// Each must fail (or succeed) as stated, within maxAdversarialTime, and leave the Program
// able to serve the next call.
func TestAdversarialScripts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string // the body of f()
		class string // "" for success
		want  string // substring of the error message, or the JSON result on success
	}{
		// Time.
		{"infinite loop", `for (;;) {}`, ClassDeadline, "exceeded its deadline of 50ms"},
		{"infinite loop caught", `try { for (;;) {} } catch (e) { return 'caught' }`, ClassDeadline, "deadline"},
		{"infinite loop in finally", `try { return 1 } finally { for (;;) {} }`, ClassDeadline, "deadline"},
		{"catastrophic regexp (RE2 in goja: linear)", `return /(a+)+$/.test('a'.repeat(5000) + 'b')`, "", "false"},
		{"deep recursion", `function r() { return r() } return r()`, ClassFailed, "call stack exceeded 1000 frames at r (test.js:"},
		{"deep mutual recursion", `function a(n) { return b(n) } function b(n) { return a(n) } return a(1)`, ClassFailed, "call stack exceeded"},

		// Memory: strings.
		{"repeat 2**30", `return 'x'.repeat(2**30)`, ClassFailed, "RangeError: String.prototype.repeat: result of 1073741824 characters exceeds the sandbox limit of 1048576"},
		{"padStart 2**30", `return 'x'.padStart(2**30)`, ClassFailed, "String.prototype.padStart"},
		{"padEnd 2**30", `return 'x'.padEnd(2**30, 'ab')`, ClassFailed, "String.prototype.padEnd"},
		{"concat amplification", `var s = 'x'.repeat(1 << 19); return s.concat(s, s, s)`, ClassFailed, "String.prototype.concat"},
		{"join amplification", `var s = 'x'.repeat(1 << 19); return [s, s, s].join('')`, ClassFailed, "Array.prototype.join"},
		{"implicit join amplification", `var s = 'x'.repeat(1 << 19); return '' + [s, s, s]`, ClassFailed, "Array.prototype.join"},
		{"replaceAll amplification", `return 'x'.repeat(1 << 10).replaceAll('x', 'y'.repeat(1 << 11))`, ClassFailed, "String.prototype.replaceAll: result of 2097152"},
		{"replace with $' (quadratic)", `return 'x'.repeat(4096).replace(/x/g, "$'")`, ClassFailed, "RegExp.prototype[Symbol.replace]"},
		{"string replace with $` (quadratic)", "return 'x'.repeat(4096).replaceAll('x', '$`')", ClassFailed, "String.prototype.replaceAll"},
		{"replace function amplification", `var big = 'y'.repeat(1 << 19); return 'xxx'.replace(/x/g, () => big)`, ClassFailed, "RegExp.prototype[Symbol.replace]"},
		{"String.raw amplification", `var s = 'x'.repeat(1 << 19); return String.raw({raw: [s, s, s]})`, ClassFailed, "String.raw"},
		{"encoding amplification", `return encoding.hex.encode('x'.repeat(1 << 20))`, ClassFailed, "encoding.hex.encode"},
		{"JSON.stringify amplification", `var s = 'x'.repeat(1 << 19); return JSON.stringify([s, s, s]).length`, ClassFailed, "JSON.stringify: result exceeds"},

		// Memory and time: arrays.
		{"new Array(1e9).fill(0)", `return new Array(1e9).fill(0)`, ClassFailed, "Array.prototype.fill: length 1000000000 exceeds the sandbox limit of 65536"},
		{"length 1e9 costs nothing", `var a = []; a.length = 1e9; return a.length`, "", "1000000000"},
		{"length 1e9 then indexOf", `var a = []; a.length = 1e9; return a.indexOf(1)`, ClassFailed, "Array.prototype.indexOf"},
		{"length 1e9 then join", `var a = []; a.length = 1e9; return a.join()`, ClassFailed, "Array.prototype.join"},
		{"length 1e9 then sort", `var a = [3, 1]; a.length = 1e9; return a.sort()`, ClassFailed, "Array.prototype.sort"},
		{"spread of a long string", `return [...'x'.repeat(1 << 20)].length`, ClassFailed, "iterator: more than 65536 steps"},
		{"Array.from a long string", `return Array.from('x'.repeat(1 << 20)).length`, ClassFailed, "iterator: more than"},
		{"spread of many regexp matches", `return [...'x'.repeat(1 << 18).matchAll(/x/g)].length`, ClassDeadline, "exceeded its deadline"},
		{"spread of many regexp matches, caught", `try { return [...'x'.repeat(1 << 18).matchAll(/x/g)].length } catch (e) { for (;;) {} }`, ClassDeadline, "exceeded its deadline"},
		{"sparse spread", `var a = []; a[4e9] = 1; return [...a].length`, ClassFailed, "iterator: more than 65536 steps"},
		{"sparse into a Set", `var a = []; a.length = 1e9; return new Set(a).size`, ClassFailed, "iterator: more than"},
		{"inflated arguments spread", `function g() { arguments.length = 1e9; return [...arguments].length } return g()`, ClassFailed, "iterator: more than"},
		{"apply with a huge array-like", `return Math.max.apply(null, {length: 1e9})`, ClassFailed, "Function.prototype.apply: length 1000000000"},
		{"Reflect.apply with a huge array-like", `return Reflect.apply(Math.max, null, {length: 1e9})`, ClassFailed, "Reflect.apply"},
		{"Reflect.construct with a huge array-like", `return Reflect.construct(Array, {length: 1e9})`, ClassFailed, "Reflect.construct"},
		{"Array.from a huge array-like", `return Array.from({length: 1e9}).length`, ClassFailed, "Array.from"},
		{"generic method on a huge array-like", `return Array.prototype.lastIndexOf.call({length: 2**53 - 1}, 1)`, ClassFailed, "Array.prototype.lastIndexOf: length 9007199254740991"},
		{"length getter that grows after the check", `return Array.prototype.indexOf.call({get length() { return this.n++ ? 2**53 - 1 : 1 }, n: 0}, 5)`, "", "-1"},
		{"length valueOf that grows after the check", `return Array.prototype.includes.call({length: {n: 0, valueOf() { return this.n++ ? 1e9 : 1 }}, 0: 7}, 7)`, "", "true"},
		{"apply with a growing length getter", `return Math.max.apply(null, {get length() { return this.n++ ? 1e9 : 1 }, n: 0, 0: 7})`, "", "7"},
		{"Reflect.apply with a growing length getter", `return Reflect.apply(Math.max, null, {get length() { return this.n++ ? 1e9 : 2 }, n: 0, 0: 1, 1: 3})`, "", "3"},
		{"concat with a growing spreadable", `return [].concat({[Symbol.isConcatSpreadable]: true, get length() { return this.n++ ? 1e9 : 1 }, n: 0, 0: 'a'})`, "", `["a"]`},
		{"Array.from with a growing length getter", `return Array.from({get length() { return this.n++ ? 1e9 : 2 }, n: 0}).length`, "", "2"},
		{"flat of a growing array-like", `return Array.prototype.flat.call({get length() { return this.n++ ? 1e9 : 1 }, n: 0, 0: [1, 2]})`, "", "[1,2]"},
		{"writers refuse array-likes", `return Array.prototype.fill.call({length: 3}, 0)`, ClassFailed, "Array.prototype.fill: the sandbox supports it on arrays only"},
		{"readers still take arguments", `function g() { return Array.prototype.slice.call(arguments, 1) } return g(1, 2, 3)`, "", "[2,3]"},
		{"push past the cap", `var a = []; a.length = 65536; a.push(1); return a.length`, ClassFailed, "Array.prototype.push"},
		{"concat doubling", `var a = []; a.length = 1 << 12; for (var i = 0; i < 8; i++) a = a.concat(a); return a.length`, ClassFailed, "Array.prototype.concat"},
		{"flat of a huge inner array", `var a = []; a.length = 1e6; return [a].flat().length`, ClassFailed, "Array.prototype.flat"},
		{"flatMap growth", `var big = []; big.length = 40000; return [1, 2, 3].flatMap(() => big).length`, ClassFailed, "Array.prototype.flatMap"},
		{"nested arrays to string", `var a = []; for (var i = 0; i < 5000; i++) a = [a]; return String(a)`, ClassFailed, "Array.prototype.join: nesting deeper than 1000"},
		{"cyclic array to string", `var a = [1, 2]; a.push(a); return String(a)`, "", `"1,2,"`},
		{"JSON.parse nesting", `return JSON.parse('['.repeat(100000) + ']'.repeat(100000))`, ClassFailed, "JSON.parse: nesting deeper than 128"},
		{"JSON.stringify nesting", `var a = []; for (var i = 0; i < 1000; i++) a = [a]; return JSON.stringify(a)`, ClassFailed, "JSON.stringify: nesting deeper than 128"},

		// Code from strings.
		{"eval", `return eval('1')`, ClassFailed, "EvalError: eval is disabled in the sandbox at f (test.js:"},
		{"indirect eval", `return (0, eval)('1')`, ClassFailed, "eval is disabled"},
		{"function constructor via an instance", `return (function () {}).constructor('return 1')()`, ClassFailed, "EvalError: the Function constructor is disabled"},
		{"Function()", `return Function('return 1')()`, ClassFailed, "the Function constructor is disabled"},
		{"new Function()", `return new Function('return 1')()`, ClassFailed, "the Function constructor is disabled"},
		{"Function via a class", `class A {} return A.constructor('return 1')()`, ClassFailed, "the Function constructor is disabled"},
		{"Function via Reflect.construct", `return Reflect.construct(Function, ['return 1'])()`, ClassFailed, "the Function constructor is disabled"},
		{"generator function constructor", `return (function* () {}).constructor('yield 1')().next().value`, ClassFailed, "the GeneratorFunction constructor is disabled"},
		{"generator function constructor via the prototype", `return Object.getPrototypeOf(function* () {}).constructor('yield 1')`, ClassFailed, "GeneratorFunction constructor"},
		{"async function constructor", `return (async function () {}).constructor('return 1')`, ClassFailed, "the AsyncFunction constructor is disabled"},
		{"instanceof Function still works", `return [(function () {}) instanceof Function, (() => 1) instanceof Function, (async () => 1) instanceof Function]`, "", "[true,true,true]"},

		// What is not there.
		{"no timers, modules, network or process", `return [typeof setTimeout, typeof setInterval, typeof setImmediate, typeof queueMicrotask, typeof require, typeof module, typeof exports, typeof process, typeof fetch, typeof XMLHttpRequest, typeof WebSocket].join()`, "", `"undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined,undefined"`},
		{"no Proxy, BigInt, binary data or GoError", `return [typeof Proxy, typeof BigInt, typeof Uint8Array, typeof ArrayBuffer, typeof DataView, typeof SharedArrayBuffer, typeof GoError].join()`, "", `"undefined,undefined,undefined,undefined,undefined,undefined,undefined"`},
		{"no raw JSON", `return [typeof JSON.rawJSON, typeof JSON.isRawJSON].join()`, "", `"undefined,undefined"`},

		// Mutating the built-ins.
		{"assign a built-in method", `JSON.stringify = function () { return '"x"' }`, ClassFailed, "TypeError"},
		{"assign a global", `JSON = {}`, ClassFailed, "TypeError"},
		{"delete a built-in method", `delete Array.prototype.map`, ClassFailed, "TypeError"},
		{"define on a prototype", `Object.defineProperty(Array.prototype, 'map', {value: 1})`, ClassFailed, "TypeError"},
		{"pollute Object.prototype", `Object.prototype.polluted = 1`, ClassFailed, "TypeError: Cannot add property polluted, object is not extensible"},
		{"pollute via __proto__", `({}).__proto__.polluted = 1`, ClassFailed, "TypeError"},
		{"replace Object.prototype's prototype", `Object.setPrototypeOf(Object.prototype, {polluted: 1})`, ClassFailed, "TypeError"},
		{"shadow call on a built-in method", `Math.max.call = function () { return 'evil' }`, ClassFailed, "TypeError"},
		{"mutate a host helper", `crypto.sha256 = function () { return 'x' }`, ClassFailed, "TypeError"},
		{"mutate an iterator prototype", `Object.getPrototypeOf([][Symbol.iterator]()).next = function () { return {done: true} }`, ClassFailed, "TypeError"},
		{"assign to a frozen prototype's override", `Object.prototype.toString = function () { return 'evil' }`, ClassFailed, "Cannot assign to read only property 'toString' of a frozen built-in"},
		{"own toString still assignable", `var o = {}; o.toString = function () { return 'mine' }; return String(o)`, "", `"mine"`},
		{"error subclasses still name themselves", `class E extends Error { constructor(m) { super(m); this.name = 'E' } } var e = new E('boom'); e.message = 'bang'; return String(e)`, "", `"E: bang"`},
		{"prototype-style constructor assignment", `function A() {} A.prototype = Object.create(Object.prototype); A.prototype.constructor = A; return new A().constructor === A`, "", "true"},

		// Output.
		{"cyclic result", `var o = {}; o.self = o; return o`, ClassOutputInvalid, "cannot serialize a cyclic structure"},
		{"10 MiB string result", `var s = 'x'.repeat(1 << 20); var t = s + s; t = t + t; t = t + t; return t + s + s`, ClassOutputTooLarge, "the result exceeds 65536 bytes of JSON"},
		{"wide result", `var a = []; for (var i = 0; i < 1000; i++) a.push('x'.repeat(100)); return a`, ClassOutputTooLarge, "65536 bytes"},
		{"exponential result", `var a = ['x'.repeat(1000)]; for (var i = 0; i < 60; i++) a = [a, a]; return a`, ClassOutputTooLarge, "65536 bytes"},
		{"deep result", `var a = []; for (var i = 0; i < 1000; i++) a = [a]; return a`, ClassOutputInvalid, "nesting deeper than 128"},
		{"Promise result", `return Promise.resolve(1)`, ClassOutputInvalid, "Promise"},
		{"throwing toJSON", `return {toJSON() { throw new Error('no JSON') }}`, ClassOutputInvalid, "Error: no JSON"},
		{"looping getter in the result", `return {get x() { for (;;) {} }}`, ClassDeadline, "deadline"},

		// Throwing.
		{"thrown error", `throw new TypeError('bad input')`, ClassFailed, "TypeError: bad input at f (test.js:"},
		{"thrown string", `throw 'boom'`, ClassFailed, "boom"},
		{"thrown object", `throw {code: 42}`, ClassFailed, `{"code":42}`},
		{"thrown object whose description loops", `throw {get message() { for (;;) {} }}`, ClassFailed, "could not be described"},
		{"host helper misuse", `return crypto.sha256(42)`, ClassFailed, "TypeError: crypto.sha256: data must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			src := "function f() {\n" + tt.body + "\n}\nfunction ping() { return 'pong' }"
			p := newProgram(t, src, []string{"f", "ping"})
			if tt.class == ClassDeadline || tt.name == "thrown object whose description loops" {
				// Only the cases about deadlines run against a short one: the others must
				// fail for their own reason, however slow the machine.
				setDeadline(p, "f", testDeadline)
			}
			if tt.class != ClassDeadline {
				// JavaScript code stops at the interrupt; on a loaded machine its goroutine
				// may still take longer than the grace to be scheduled, and the call would
				// be abandoned with ClassDeadline instead of reporting its own failure.
				p.grace = generousDeadline
			}
			start := time.Now()
			out, err := call(t, p, "f")
			elapsed := time.Since(start)
			if elapsed > maxAdversarialTime {
				t.Errorf("took %s", elapsed)
			}
			if tt.class == "" {
				if err != nil || out != tt.want {
					t.Errorf("f() = %.200s, %v; want %s", out, err, tt.want)
				}
			} else {
				if ClassOf(err) != tt.class || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("f() = %.100s, %v; want class %s containing %q", out, err, tt.class, tt.want)
				}
				if out != "" {
					t.Errorf("a failed call returned %.100s", out)
				}
			}
			if got, err := call(t, p, "ping"); err != nil || got != `"pong"` {
				t.Errorf("next call: %s, %v", got, err)
			}
		})
	}
}

// TestMutationsDoNotLeakIntoTheNextCall tries to change shared state in one call and checks
// it from the next, whether the attempt's exception was caught or not.
func TestMutationsDoNotLeakIntoTheNextCall(t *testing.T) {
	t.Parallel()
	src := `
function mutate(caught) {
	const attempts = [
		() => { JSON.stringify = function () { return '"hijacked"' } },
		() => { JSON.parse = function () { return 'hijacked' } },
		() => { Object.prototype.polluted = 1 },
		() => { Object.defineProperty(Object.prototype, 'polluted', {value: 1}) },
		() => { Array.prototype.push = function () { return -1 } },
		() => { String.prototype.toUpperCase = function () { return 'hijacked' } },
		() => { Object.prototype.toString = function () { return 'hijacked' } },
		() => { Math.random = function () { return 4 } },
		() => { encoding.base64.encode = function () { return 'hijacked' } },
	];
	let refused = 0;
	for (const attempt of attempts) {
		if (!caught) { attempt(); continue }
		try { attempt() } catch (e) { refused++ }
	}
	return refused;
}
function check() {
	return [
		JSON.stringify({a: 1}),
		JSON.parse('{"b":2}').b,
		({}).polluted === undefined && [].polluted === undefined,
		[1].push(2),
		'abc'.toUpperCase(),
		String({}),
		Math.random() < 1,
		encoding.base64.encode('hi'),
	];
}`
	p := newProgram(t, src, []string{"mutate", "check"})
	const want = `["{\"a\":1}",2,true,2,"ABC","[object Object]",true,"aGk="]`
	if got := mustCall(t, p, "check"); got != want {
		t.Fatalf("before: %s", got)
	}
	if got := mustCall(t, p, "mutate", true); got != "9" {
		t.Errorf("mutate(caught) refused %s of 9 attempts", got)
	}
	if got := mustCall(t, p, "check"); got != want {
		t.Errorf("after caught attempts: %s", got)
	}
	if _, err := call(t, p, "mutate", false); ClassOf(err) != ClassFailed {
		t.Errorf("mutate(uncaught) err = %v", err)
	}
	if got := mustCall(t, p, "check"); got != want {
		t.Errorf("after an uncaught attempt: %s", got)
	}
}
