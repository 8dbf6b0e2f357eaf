package scripting

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"
)

// fuzzScript walks its input, echoes it and round-trips it through JSON.
const fuzzScript = `
function f(x) {
	const kind = Array.isArray(x) ? 'array' : x === null ? 'null' : typeof x;
	let size = 0;
	if (kind === 'array' || kind === 'string') size = x.length;
	if (kind === 'object') size = Object.keys(x).length;
	const text = JSON.stringify(x);
	return {kind: kind, size: size, echo: x, text: text, again: JSON.parse(text)};
}`

// hangAfter is how long a fuzzed call may take before it counts as hung.
const hangAfter = 10 * time.Second

// FuzzCallInput feeds arbitrary JSON (or, when the bytes are not JSON, an arbitrary string)
// through a small script. The call must never panic or hang; when it succeeds, the script
// must have seen exactly the input.
func FuzzCallInput(f *testing.F) {
	for _, seed := range []string{
		`null`, `true`, `0`, `-1.5e300`, `"text"`, `"\u00e9\ud83d\ude00\u2028"`, `"\ud800"`,
		`[]`, `{}`, `[1,"a",null,{"b":[true]}]`, `{"__proto__":{"polluted":1},"constructor":"c","toString":1}`,
		`{"b":1,"a":2,"10":3,"2":4}`, `[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]`, `1e400`, `12345678901234567890`,
		`{"a":"` + string(bytes.Repeat([]byte("x"), 70000)) + `"}`, `not json at all`,
	} {
		f.Add([]byte(seed))
	}
	p, err := CompileWith("fuzz.js", fuzzScript, Options{Required: []string{"f"}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(p.Close)
	f.Fuzz(func(t *testing.T, data []byte) {
		var arg any = string(data)
		var want any = string([]rune(string(data))) // each invalid UTF-8 byte becomes U+FFFD
		if json.Valid(data) {
			arg = json.RawMessage(data)
			if err := json.Unmarshal(data, &want); err != nil {
				want = nil // a number out of float64 range: the sandbox must refuse it
			}
		}
		// A hang would stall the fuzzer silently: turn it into a crash that saves the input.
		watchdog := time.AfterFunc(hangAfter, func() {
			panic(fmt.Sprintf("FuzzCallInput: a call has not returned after %s; input %q", hangAfter, data))
		})
		out, err := p.Call(context.Background(), "f", arg)
		watchdog.Stop()
		if err != nil {
			switch ClassOf(err) {
			case ClassOutputTooLarge, ClassOutputInvalid, ClassFailed, ClassDeadline:
				return
			}
			if !errors.Is(err, ErrInput) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		var got struct {
			Kind  string
			Size  int
			Echo  any
			Text  *string
			Again any
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("result is not JSON: %v: %.200s", err, out)
		}
		if want == nil && got.Kind != "null" {
			t.Fatalf("an unrepresentable number was passed as %s", got.Kind)
		}
		if !reflect.DeepEqual(got.Echo, want) || !reflect.DeepEqual(got.Again, want) {
			t.Fatalf("the script saw %.200v, want %.200v", got.Echo, want)
		}
		var text any
		if got.Text == nil || json.Unmarshal([]byte(*got.Text), &text) != nil || !reflect.DeepEqual(text, want) {
			t.Fatalf("JSON.stringify gave %.200v", got.Text)
		}
	})
}
