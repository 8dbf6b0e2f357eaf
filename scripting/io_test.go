package scripting

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// TestResultSerialization checks the JSON of results against what JSON.stringify produces
// in a conforming engine.
func TestResultSerialization(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"undefined", "null"},
		{"null", "null"},
		{"function () {}", "null"},
		{"Symbol('s')", "null"},
		{"true", "true"},
		{"0", "0"},
		{"-0", "0"},
		{"1.5", "1.5"},
		{"-123456789012", "-123456789012"},
		{"2 ** 53", "9007199254740992"},
		{"1e21", "1e+21"},
		{"1e-7", "1e-7"},
		{"0.1 + 0.2", "0.30000000000000004"},
		{"NaN", "null"},
		{"-Infinity", "null"},
		{`'quote " backslash \\ newline \n tab \t nul \0 unit \x1f del \x7f'`, `"quote \" backslash \\ newline \n tab \t nul \u0000 unit \u001f del ` + "\x7f" + `"`},
		{`'\b\f\r'`, `"\b\f\r"`},
		{`'é ü 日本 😀'`, `"é ü 日本 😀"`},
		{`'line\u2028separator'`, "\"line\u2028separator\""},
		{`'lone \ud800 high, lone \udc00 low, reversed \udc00\ud800'`, `"lone \ud800 high, lone \udc00 low, reversed \udc00\ud800"`},
		{"[1, undefined, function () {}, Symbol(), null, , 2]", "[1,null,null,null,null,null,2]"},
		{"{a: undefined, b: function () {}, c: Symbol(), d: 1}", `{"d":1}`},
		{"{b: 1, a: 2, 10: 3, 2: 4}", `{"2":4,"10":3,"b":1,"a":2}`},
		{"{'key \"quoted\"': 1, 'é': 2}", `{"key \"quoted\"":1,"é":2}`},
		{"new Date(0)", `"1970-01-01T00:00:00.000Z"`},
		{"{toJSON(key) { return 'key=' + key }}", `"key="`},
		{"{inner: {toJSON(key) { return 'key=' + key }}}", `{"inner":"key=inner"}`},
		{"[new Number(3), new String('s'), new Boolean(false)]", `[3,"s",false]`},
		{"new Map([[1, 2]])", "{}"},
		{"Object.create({inherited: 1}, {own: {value: 2, enumerable: true}, hidden: {value: 3}})", `{"own":2}`},
		{"new Error('message is not enumerable')", "{}"},
		{"/re/g", "{}"},
		{"{get computed() { return 42 }}", `{"computed":42}`},
		{"[[[]], {}, [{}]]", "[[[]],{},[{}]]"},
		{"(() => { const shared = {x: 1}; return [shared, shared] })()", `[{"x":1},{"x":1}]`},
	}
	src := "function f(i) {\n\tswitch (i) {\n"
	for i, tt := range tests {
		src += "\tcase " + strconv.Itoa(i) + ": return " + tt.expr + ";\n"
	}
	src += "\t}\n}"
	p := newProgram(t, src, []string{"f"})
	for i, tt := range tests {
		if got := mustCall(t, p, "f", i); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.expr, got, tt.want)
		}
		if !json.Valid([]byte(tt.want)) {
			t.Errorf("test expectation %s is not JSON", tt.want)
		}
	}
}

// TestScriptJSONStringify checks the script-visible JSON.stringify, which the sandbox
// implements itself, against a conforming engine's answers.
func TestScriptJSONStringify(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{"JSON.stringify({a: [1, {b: 2}], c: 'x'})", `{"a":[1,{"b":2}],"c":"x"}`},
		{"JSON.stringify({a: [1, {b: 2}], e: [], o: {}}, null, 2)", "{\n  \"a\": [\n    1,\n    {\n      \"b\": 2\n    }\n  ],\n  \"e\": [],\n  \"o\": {}\n}"},
		{"JSON.stringify([1, [2]], null, '--')", "[\n--1,\n--[\n----2\n--]\n]"},
		{"JSON.stringify({a: 1}, null, 20)", "{\n          \"a\": 1\n}"},
		{"JSON.stringify({a: 1}, null, 'abcdefghijklmnop')", "{\nabcdefghij\"a\": 1\n}"},
		{"JSON.stringify({a: 1}, null, new Number(1))", "{\n \"a\": 1\n}"},
		{"JSON.stringify({a: 1, b: 2, c: {a: 3, d: 4}}, ['c', 'a', 'c', 1])", `{"c":{"a":3},"a":1}`},
		{"JSON.stringify({a: 1, b: 'x', c: [1, 2]}, (k, v) => typeof v === 'number' ? v * 10 : v)", `{"a":10,"b":"x","c":[10,20]}`},
		{"JSON.stringify({a: 1}, function (k, v) { return k === '' ? [this[''] === v, typeof this] : v })", `[true,"object"]`},
		{"JSON.stringify({a: 1, b: 2}, (k, v) => k === 'a' ? undefined : v)", `{"b":2}`},
		{"typeof JSON.stringify(undefined) + typeof JSON.stringify(() => 1)", `undefinedundefined`},
		{"JSON.stringify('\\ud800')", `"\ud800"`},
		{"JSON.stringify(new Date(86400000))", `"1970-01-02T00:00:00.000Z"`},
		{"(() => { try { const o = {}; o.o = o; JSON.stringify(o) } catch (e) { return e.name + ': ' + e.message } })()", "TypeError: JSON.stringify: cannot serialize a cyclic structure"},
		{"JSON.parse('{\"__proto__\": {\"x\": 1}, \"b\": [1, 2.5, null, true]}', (k, v) => k === 'b' ? v.length : v).b", "4"},
		{"Object.getPrototypeOf(JSON.parse('{\"__proto__\": {\"x\": 1}}')) === Object.prototype", "true"},
	}
	src := "function f(i) {\n\tswitch (i) {\n"
	for i, tt := range tests {
		src += "\tcase " + strconv.Itoa(i) + ": return String(" + tt.expr + ");\n"
	}
	src += "\t}\n}"
	p := newProgram(t, src, []string{"f"})
	for i, tt := range tests {
		if got, want := mustCall(t, p, "f", i), jsonString(tt.want); got != want {
			t.Errorf("%s\n got %s\nwant %s", tt.expr, got, want)
		}
	}
}

type named string

func TestArgumentConversion(t *testing.T) {
	t.Parallel()
	p := newProgram(t, `function f(v) { return [typeof v, Array.isArray(v), v] }
function keys(v) { return Object.keys(v).join() }`, []string{"f", "keys"})
	type tagged struct {
		Name  string `json:"name"`
		Count int    `json:"count,omitempty"`
		Skip  string `json:"-"`
	}
	tests := []struct {
		name string
		arg  any
		want string
	}{
		{"nil", nil, `["object",false,null]`},
		{"string", "text é", `["string",false,"text é"]`},
		{"bool", true, `["boolean",false,true]`},
		{"int", 42, `["number",false,42]`},
		{"int64", int64(-1 << 40), `["number",false,-1099511627776]`},
		{"uint8", uint8(200), `["number",false,200]`},
		{"float32", float32(0.5), `["number",false,0.5]`},
		{"json.Number integer", json.Number("12"), `["number",false,12]`},
		{"json.Number fraction", json.Number("-2.5e3"), `["number",false,-2500]`},
		{"json.RawMessage", json.RawMessage(`{"a":[1,"x",null]}`), `["object",false,{"a":[1,"x",null]}]`},
		{"named string", named("n"), `["string",false,"n"]`},
		{"[]any", []any{1, "a", nil, []any{}}, `["object",true,[1,"a",null,[]]]`},
		{"[]string", []string{"a", "b"}, `["object",true,["a","b"]]`},
		{"nil slice", []string(nil), `["object",false,null]`},
		{"map[string]string", map[string]string{"b": "2", "a": "1"}, `["object",false,{"a":"1","b":"2"}]`},
		{"map[string][]string", map[string][]string{"k": {"v"}}, `["object",false,{"k":["v"]}]`},
		{"nil map", map[string]any(nil), `["object",false,null]`},
		{"struct through encoding/json", tagged{Name: "n", Skip: "hidden"}, `["object",false,{"name":"n"}]`},
		{"pointer to struct", &tagged{Name: "p", Count: 2}, `["object",false,{"count":2,"name":"p"}]`},
		{"bytes as encoding/json writes them", []byte("hi"), `["string",false,"aGk="]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustCall(t, p, "f", tt.arg); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	if got := mustCall(t, p, "keys", map[string]any{"zeta": 1, "alpha": 2, "mid": 3, "10": 4}); got != `"10,alpha,mid,zeta"` {
		t.Errorf("keys in order %s", got)
	}
}

func TestArgumentRefusals(t *testing.T) {
	t.Parallel()
	p := newProgram(t, `function f(v) { return 1 }`, []string{"f"})
	deep := any("leaf")
	for range maxJSONDepth + 1 {
		deep = []any{deep}
	}
	for name, arg := range map[string]any{
		"too deep":            deep,
		"invalid json.Number": json.Number("1e"),
		"invalid raw JSON":    json.RawMessage(`{`),
		"channel":             make(chan int),
		"function":            func() {},
	} {
		if _, err := p.Call(context.Background(), "f", arg); !errors.Is(err, ErrInput) || ClassOf(err) != "" {
			t.Errorf("%s: err = %v, want ErrInput", name, err)
		}
	}
	// The runtime is fine afterwards, and a refused call was not counted.
	if got := mustCall(t, p, "f", deep.([]any)[0]); got != "1" {
		t.Errorf("next call = %s", got)
	}
	if s := p.Stats(); s.Calls != 1 {
		t.Errorf("calls = %d", s.Calls)
	}
}

func TestArgumentsAreFreshPlainObjects(t *testing.T) {
	t.Parallel()
	src := `
function mutate(m) {
	const seen = [m.x === undefined, Object.getPrototypeOf(m) === Object.prototype, Object.isFrozen(m), m.__proto__.polluted, ({}).polluted];
	m.x = 1;
	m.parts.text = 'changed';
	m.list.push(4);
	delete m.recipient;
	Object.defineProperty(m, 'hidden', {get() { return 1 }});
	Object.freeze(m.parts);
	return seen;
}`
	p := newProgram(t, src, []string{"mutate"})
	msg := map[string]any{
		"recipient": "+15550123456",
		"parts":     map[string]any{"text": "hello"},
		"list":      []any{1, 2, 3},
		"__proto__": map[string]any{"polluted": true},
	}
	for range 2 {
		if got := mustCall(t, p, "mutate", msg); got != "[true,true,false,true,null]" {
			t.Errorf("the script saw %s", got)
		}
	}
	if msg["recipient"] != "+15550123456" || msg["parts"].(map[string]any)["text"] != "hello" || len(msg["list"].([]any)) != 3 || len(msg) != 4 {
		t.Errorf("the caller's value changed: %v", msg)
	}
}

func TestCallInto(t *testing.T) {
	t.Parallel()
	src := `
function f(kind) {
	switch (kind) {
	case 'ok': return {target: 'messages', headers: {'x-a': '1'}, count: 2};
	case 'unknown': return {target: 'messages', extra: true};
	case 'nested unknown': return {target: 'messages', headers: {}, inner: {deep: 1}};
	case 'wrong type': return {target: 42};
	case 'not an object': return 'text';
	case 'null': return null;
	}
}`
	p := newProgram(t, src, []string{"f"})
	type out struct {
		Target  string            `json:"target"`
		Headers map[string]string `json:"headers"`
		Count   int               `json:"count"`
	}
	var o out
	ok, err := p.CallInto(context.Background(), "f", &o, "ok")
	if !ok || err != nil || o.Target != "messages" || o.Headers["x-a"] != "1" || o.Count != 2 {
		t.Errorf("ok: %v %v %+v", ok, err, o)
	}
	for _, kind := range []string{"unknown", "nested unknown", "wrong type", "not an object"} {
		var o out
		ok, err := p.CallInto(context.Background(), "f", &o, kind)
		if ok || ClassOf(err) != ClassOutputInvalid || !strings.Contains(err.Error(), "does not match the expected shape") {
			t.Errorf("%s: %v %v", kind, ok, err)
		}
	}
	untouched := out{Target: "before"}
	for _, kind := range []string{"null", "undefined"} {
		if ok, err := p.CallInto(context.Background(), "f", &untouched, kind); ok || err != nil || untouched.Target != "before" {
			t.Errorf("%s: %v %v %+v", kind, ok, err, untouched)
		}
	}
	if _, err := p.CallInto(context.Background(), "f", out{}, "ok"); err == nil || ClassOf(err) != "" {
		t.Errorf("non-pointer out: %v", err)
	}
	if s := p.Stats(); s.Failures[ClassOutputInvalid] != 4 {
		t.Errorf("stats = %+v", s)
	}
}

func TestErrorMessagesDoNotCarryTheInput(t *testing.T) {
	t.Parallel()
	src := `
function notCallable(m) { return m.recipient() }
function parse(m) { return JSON.parse(m.body) }
function thrown(m) { throw new Error('bad recipient ' + m.recipient + ' in ' + JSON.stringify(m)) }
function output(m) { return {[m.recipient]: 1} }`
	p := newProgram(t, src, []string{"notCallable", "parse", "thrown", "output"})
	msg := map[string]any{"recipient": "+15550123456", "body": "secret-token: {", "nested": []any{map[string]any{"key": "private-key-value"}}}
	for _, entry := range []string{"notCallable", "parse", "thrown"} {
		_, err := call(t, p, entry, msg)
		if ClassOf(err) != ClassFailed || strings.Contains(err.Error(), "5550123456") || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "private-key") {
			t.Errorf("%s: %v", entry, err)
		}
	}
	var out struct{}
	_, err := p.CallInto(context.Background(), "output", &out, msg)
	if ClassOf(err) != ClassOutputInvalid || strings.Contains(err.Error(), "5550123456") || !strings.Contains(err.Error(), redactedMark) {
		t.Errorf("output: %v", err)
	}
}
