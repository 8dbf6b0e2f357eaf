package scripting

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// parseInputs are JSON texts (and near misses) for ParseJSON and fromJSON.
var parseInputs = []string{
	`null`, `true`, `false`, `0`, `-0`, `12345678901234567890`, `-1.5e300`, `1e400`, `"text"`, `[]`, `{}`,
	`{"id":"gw-1","status":"delivered","to":"+15550123","at":"2026-03-02T09:30:05Z"}`,
	`[1,"a",null,{"b":[true,false]},[]]`, ` { "a" : [ 1 , 2 ] } `, `{"a":1,"a":2}`,
	`"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"`, `"é日本😀"`, `{"__proto__":{"x":1},"constructor":"c"}`,
	`"\ud800"`, "\"\xff\"", "\"a\x01\"", `{"a":1}}`, `{"a":1}]`, `{"a":1} x`, `1 2`, `123abc`, `01`, `nullx`,
	`{"a":`, `[1,]`, `{"a" 1}`, ``, `   `, `-`, `1.`, `.5`, `tru`,
	strings.Repeat(`[`, 300) + strings.Repeat(`]`, 300),
}

// decodeUseNumber is encoding/json's Decoder with UseNumber on data, the reference for both
// ParseJSON (all of data must be the value) and fromJSON (the first value).
func decodeUseNumber(data []byte, whole bool) (any, error) {
	if whole && !json.Valid(data) {
		return nil, fmt.Errorf("not one JSON value")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// parseCase fails the test unless ParseJSON agrees with encoding/json on data: it takes the
// same documents (lenient reading forgives what encoding/json forgives) and gives the same
// values.
func parseCase(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := decodeUseNumber(data, true)
	got, ok := ParseJSON(data)
	if ok != (wantErr == nil) || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseJSON(%.200q) = %#v, %v; encoding/json: %#v, %v", data, got, ok, want, wantErr)
	}
}

// TestParseJSON: ParseJSON gives encoding/json's values, repeated members and invalid Unicode
// included.
func TestParseJSON(t *testing.T) {
	for _, in := range parseInputs {
		parseCase(t, []byte(in))
	}
	if v, _ := ParseJSON([]byte(`[]`)); v == nil || len(v.([]any)) != 0 {
		t.Errorf("[] = %#v, want an empty non-nil slice", v)
	}
	if v, ok := ParseJSON([]byte(`{"status":"queued","status":"sent"}`)); !ok || v.(map[string]any)["status"] != "sent" {
		t.Errorf("a gateway answer that repeats a member = %#v, %v; want the last value", v, ok)
	}
}

// FuzzParseJSON is ParseJSON's differential fuzzer: for any input, it agrees with encoding/json.
func FuzzParseJSON(f *testing.F) {
	for _, in := range parseInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parseCase(t, data)
	})
}

// TestFromJSONMatchesDecoder: a json.RawMessage argument becomes the same JavaScript value
// through the one reader as through encoding/json (the first value; what follows it is
// ignored), and is refused with the same error when it does not decode.
func TestFromJSONMatchesDecoder(t *testing.T) {
	p := newProgram(t, `function f() { return null }`, []string{"f"})
	sb, err := newSandbox(p)
	if err != nil {
		t.Fatal(err)
	}
	sb.outLimit = 1 << 20
	render := func(v goja.Value) string {
		if _, err := sb.serialize(goja.Undefined(), v); err != nil {
			t.Fatal(err)
		}
		return string(sb.out)
	}
	// slow is fromJSON as it was, with encoding/json alone.
	slow := func(raw []byte) (goja.Value, error) {
		v, err := decodeUseNumber(raw, false)
		if err != nil {
			return nil, fmt.Errorf("%w: invalid JSON: %w", ErrInput, err)
		}
		return sb.toJS(v, 0)
	}
	outcome := func(v goja.Value, err error) string {
		if err != nil {
			return "error: " + err.Error()
		}
		return render(v)
	}
	for _, in := range parseInputs {
		got, want := outcome(sb.fromJSON([]byte(in), 0)), outcome(slow([]byte(in)))
		if got != want {
			t.Errorf("fromJSON(%.100q) = %.200s, want %.200s", in, got, want)
		}
	}
}
