package scripting

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// objectEcho returns what the script sees of its argument: keys in order, JSON, prototype.
const objectEcho = `function f(o) {
	if (o === null) return 'null';
	return JSON.stringify([Reflect.ownKeys(o), o, Object.getPrototypeOf(o) === Object.prototype,
		o.parts === undefined ? null : Reflect.ownKeys(o.parts)]);
}
function g(o) { throw new Error('bad ' + o.recipient + ' ' + o.parts.text + ' ' + o.channel); }`

// TestObjectMatchesMap: an Object argument arrives exactly as the map with the same members
// does, sorted or not, with a repeated name keeping its last value, nil as null.
func TestObjectMatchesMap(t *testing.T) {
	p := newProgram(t, objectEcho, []string{"f", "g"})
	cases := []struct {
		obj  Object
		want map[string]any
	}{
		{Object{{"attempt", 2}, {"channel", "sms"}, {"parts", Object{{"text", "hi"}}}, {"recipient", "+1555"}},
			map[string]any{"attempt": 2, "channel": "sms", "parts": map[string]any{"text": "hi"}, "recipient": "+1555"}},
		{Object{{"b", 1}, {"a", nil}, {"10", true}, {"2", []any{Object{{"z", 1}, {"y", 2}}}}},
			map[string]any{"b": 1, "a": nil, "10": true, "2": []any{map[string]any{"z": 1, "y": 2}}}},
		{Object{{"a", 1}, {"a", 2}, {"__proto__", Object{{"x", 1}}}, {"toString", "t"}},
			map[string]any{"a": 2, "__proto__": map[string]any{"x": 1}, "toString": "t"}},
		{Object{}, map[string]any{}},
		{nil, nil},
	}
	for _, c := range cases {
		got, err := call(t, p, "f", c.obj)
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if c.want == nil {
			want, err = call(t, p, "f", nil)
		} else {
			want, err = call(t, p, "f", c.want)
		}
		if err != nil || got != want {
			t.Errorf("Object %v arrived as %s, the map as %s (%v)", c.obj, got, want, err)
		}
	}
	deep := any("leaf")
	for range maxJSONDepth + 1 {
		deep = Object{{"d", deep}}
	}
	if _, err := p.Call(context.Background(), "f", deep); !errors.Is(err, ErrInput) {
		t.Errorf("an Object nested too deep: %v, want ErrInput", err)
	}
}

// TestObjectRedacted: the values of an Object are redacted from error messages, as a map's
// are, and its names are not.
func TestObjectRedacted(t *testing.T) {
	p := newProgram(t, objectEcho, []string{"f", "g"})
	_, err := p.Call(context.Background(), "g", Object{{"channel", "channel"}, {"parts", Object{{"text", "secret text"}}}, {"recipient", "+15550123456"}})
	if err == nil || strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "+1555") ||
		!strings.Contains(err.Error(), "bad [input] [input] [input]") {
		t.Fatalf("error %v, want the values redacted", err)
	}
}
