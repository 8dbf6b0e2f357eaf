package scripting

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// decodeTarget exercises every kind a decode plan handles.
type decodeTarget struct {
	Target     string                     `json:"target"`
	Headers    map[string]string          `json:"headers"`
	BodyFormat string                     `json:"bodyFormat"`
	Body       json.RawMessage            `json:"body"`
	RetryAfter *float64                   `json:"retryAfter"`
	Count      int8                       `json:"count"`
	Big        int64                      `json:"big"`
	Size       uint16                     `json:"size"`
	Wide       uint64                     `json:"wide"`
	Ratio      float32                    `json:"ratio"`
	On         bool                       `json:"on"`
	List       []decodeItem               `json:"list"`
	Nested     *decodeTarget              `json:"nested"`
	Named      decodeName                 `json:"named"`
	Counts     map[string]int             `json:"counts,omitempty"`
	Pointers   []*string                  `json:"pointers"`
	Raws       map[string]json.RawMessage `json:"raws"`
	ByName     map[decodeName][]bool      `json:"byName"`
	Untagged   string
	Ignored    string `json:"-"`
	//lint:ignore SA5008 encoding/json names this field "-": the plan must do the same
	Dash string `json:"-,"`
	//lint:ignore SA5008 encoding/json ignores an invalid name and uses the field's: so must the plan
	BadTag string `json:"a\\b"`
	//lint:ignore U1000 encoding/json skips unexported fields: so must the plan
	unexported string
}

// decodeItem is a receipt-like element.
type decodeItem struct {
	ProviderReference string `json:"providerReference"`
	Report            string `json:"report"`
	Code              string `json:"code"`
}

// decodeName is a named string type (with a method that is not an unmarshaler).
type decodeName string

func (n decodeName) String() string { return string(n) }

// decodeTextName unmarshals itself from text: it has no plan.
type decodeTextName string

func (n *decodeTextName) UnmarshalText(b []byte) error {
	*n = decodeTextName("text:" + string(b))
	return nil
}

// decodeInputs are JSON texts for the comparison with encoding/json: canonical results as
// the serializer writes them, and everything the fast path must leave to encoding/json.
var decodeInputs = []string{
	`null`, `{}`, `[]`, `"text"`, `1`, `-0`, `0.5`, `1e+21`, `true`,
	`{"target":"messages","headers":{"content-type":"application/json","x-request-id":"01J9"},"bodyFormat":"json","body":{"to":"+1555","text":"hi"}}`,
	`{"target":"a","body":"text body","retryAfter":1.5,"count":-128,"big":-9007199254740993,"size":65535,"wide":18446744073709551615,"ratio":0.1,"on":true}`,
	`{"body":null,"retryAfter":null,"headers":null,"list":null,"nested":null,"target":null,"count":null,"on":null}`,
	`{"list":[{"providerReference":"gw-1","report":"delivered"},{"providerReference":"gw-2","report":"sent","code":"x"}]}`,
	`{"list":[],"headers":{},"counts":{},"pointers":[]}`,
	`{"nested":{"target":"inner","nested":{"on":true}},"named":"n","Untagged":"u","-":"dash"}`,
	`{"pointers":["a",null,"c"],"raws":{"a":[1, 2],"b":null,"c":{"d":"e"}},"byName":{"x":[true,false,null]}}`,
	`{"counts":{"b":-3,"a":1}}`,
	`{"headers":{"a":null,"b":"\"quoted\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \u0000"}}`,
	`{"target":"é日本語😀"}`,
	` { "target" : "spaced" , "list" : [ { "report" : "sent" } ] } `,
	// For encoding/json alone: case-insensitive names, unknown members, wrong types, repeated
	// members (which the strict reader refuses; a script's result never repeats one).
	`{"counts":{"a":1,"a":2,"b":-3}}`,
	`{"Target":"case"}`, `{"TARGET":"case","target":"exact"}`, `{"target":"exact","TARGET":"case"}`,
	`{"unknown":1}`, `{"target":"a","target":"b"}`, `{"Ignored":"x"}`, `{"unexported":"x"}`,
	`{"BadTag":"x"}`, `{"a\\b":"x"}`,
	`{"target":1}`, `{"count":128}`, `{"count":1.5}`, `{"size":-1}`, `{"size":-0}`, `{"wide":18446744073709551616}`,
	`{"ratio":1e39}`, `{"retryAfter":1e400}`, `{"on":"true"}`, `{"list":{}}`, `{"headers":[]}`, `{"headers":{"a":1}}`,
	`{"body":"\ud800"}`, `{"target":"\ud800"}`, `{"target":"\udc00\ud800x"}`, `{"target":"a\u12"}`,
	"{\"target\":\"\xff\"}", "{\"target\":\"a\x01\"}", `{"target":"\'"}`,
	`{"target":"a"} trailing`, `{"target":"a"}}`, `{"target":"a"`, `{"target" "a"}`, `{"target":"a",}`,
	`[1,]`, `{"count":01}`, `{"count":-}`, `{"count":1.}`, `{"count":1e}`, `nul`, `nullx`, `truex`, ``,
	`{"nested":` + strings.Repeat(`{"nested":`, 300) + `{}` + strings.Repeat(`}`, 301),
}

// decodeCase decodes raw into a fresh T with decodeStrict and with encoding/json, fails the
// test unless both give the same value and the same error, and reports whether the fast
// path alone accepted raw.
func decodeCase[T any](t *testing.T, c *planCache, raw []byte) (fast bool) {
	t.Helper()
	var want, got T
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	wantErr := dec.Decode(&want)
	gotErr := c.decodeStrict(raw, &got)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) {
		t.Fatalf("%T from %.200q: error %v, encoding/json says %v", got, raw, gotErr, wantErr)
	}
	wantJSON, _ := json.Marshal(want)
	gotJSON, _ := json.Marshal(got)
	if !reflect.DeepEqual(want, got) || !bytes.Equal(wantJSON, gotJSON) {
		t.Fatalf("%T from %.200q:\n got %s\nwant %s", got, raw, gotJSON, wantJSON)
	}
	var probe T
	v, _ := zeroTarget(&probe)
	plan := c.get(v.Type())
	return plan != nil && c.fastDecode(plan, raw, v)
}

// decodeAll compares every target type on raw.
func decodeAll(t *testing.T, c *planCache, raw []byte) (fast bool) {
	t.Helper()
	fast = decodeCase[decodeTarget](t, c, raw)
	fast = decodeCase[[]decodeItem](t, c, raw) || fast
	fast = decodeCase[map[string]string](t, c, raw) || fast
	fast = decodeCase[*float64](t, c, raw) || fast
	fast = decodeCase[string](t, c, raw) || fast
	fast = decodeCase[json.RawMessage](t, c, raw) || fast
	fast = decodeCase[map[decodeTextName]string](t, c, raw) || fast
	fast = decodeCase[decodeTextName](t, c, raw) || fast
	return fast
}

// TestDecodeStrictMatchesEncodingJSON: the fast path decodes the canonical results and
// gives the same values as encoding/json; everything else gets encoding/json's answer.
func TestDecodeStrictMatchesEncodingJSON(t *testing.T) {
	var c planCache
	for _, in := range decodeInputs {
		decodeAll(t, &c, []byte(in))
	}
	for _, in := range decodeInputs[:20] {
		if !decodeCase[decodeTarget](t, &c, []byte(in)) && in[0] == '{' {
			t.Errorf("the fast path refused the canonical %.100q", in)
		}
	}
	if !decodeCase[[]decodeItem](t, &c, []byte(`[{"providerReference":"gw-1","report":"delivered"}]`)) {
		t.Error("the fast path refused an array of structs")
	}
	for _, in := range []string{`{"Target":"case"}`, `{"unknown":1}`, `{"target":"\ud800"}`, `{"count":128}`, `{"size":-0}`} {
		if decodeCase[decodeTarget](t, &c, []byte(in)) {
			t.Errorf("the fast path accepted %q", in)
		}
	}
}

// FuzzDecodeStrict: for any input, decodeStrict gives exactly what encoding/json gives.
func FuzzDecodeStrict(f *testing.F) {
	for _, in := range decodeInputs {
		f.Add([]byte(in))
	}
	var c planCache
	f.Fuzz(func(t *testing.T, raw []byte) {
		watchdog := time.AfterFunc(hangAfter, func() {
			panic(fmt.Sprintf("FuzzDecodeStrict: a decode has not returned after %s; input %q", hangAfter, raw))
		})
		defer watchdog.Stop()
		decodeAll(t, &c, raw)
	})
}

// TestDecodeStrictNonZeroTarget: a target that already holds values goes to encoding/json,
// which merges into it.
func TestDecodeStrictNonZeroTarget(t *testing.T) {
	var c planCache
	got := decodeTarget{Target: "before", Headers: map[string]string{"a": "1"}}
	if err := c.decodeStrict([]byte(`{"headers":{"b":"2"}}`), &got); err != nil {
		t.Fatal(err)
	}
	if got.Target != "before" || len(got.Headers) != 2 {
		t.Fatalf("got %+v, want the headers merged and the target kept", got)
	}
}

// TestDecodePlans: the types the fast path leaves to encoding/json have no plan.
func TestDecodePlans(t *testing.T) {
	type embedded struct{ decodeItem }
	type quoted struct {
		N int `json:"n,string"`
	}
	type twice struct {
		A string `json:"X"`
		X string
	}
	type withTime struct{ At time.Time }
	type withAny struct{ V any }
	type withNumber struct{ N json.Number }
	type withBytes struct{ B []byte }
	type withArray struct{ A [2]int }
	type recursive struct{ Next *recursive }
	var c planCache
	for _, v := range []any{embedded{}, quoted{}, twice{}, withTime{}, withAny{}, withNumber{}, withBytes{},
		withArray{}, map[decodeTextName]string{}, decodeTextName(""), map[int]string{}} {
		if c.get(reflect.TypeOf(v)) != nil {
			t.Errorf("%T has a plan", v)
		}
	}
	for _, v := range []any{decodeTarget{}, recursive{}, []decodeItem{}, json.RawMessage{}} {
		if c.get(reflect.TypeOf(v)) == nil {
			t.Errorf("%T has no plan", v)
		}
	}
}

// TestCallIntoFastPath: CallInto decodes a result through the fast path as encoding/json
// would, and a result it cannot take still fails with ClassOutputInvalid.
func TestCallIntoFastPath(t *testing.T) {
	p := newProgram(t, `function f(kind) {
		if (kind === 'case') return {Target: 'x'};
		return {target: 'messages', headers: {'x-id': 'a"b'}, body: {to: '+1', n: [1.5, -0, 1e21]}, retryAfter: 2, list: [{providerReference: 'r', report: 'sent'}]};
	}`, []string{"f"})
	var got decodeTarget
	if ok, err := p.CallInto(context.Background(), "f", &got, "ok"); !ok || err != nil {
		t.Fatal(ok, err)
	}
	if got.Target != "messages" || got.Headers["x-id"] != `a"b` || string(got.Body) != `{"to":"+1","n":[1.5,0,1e+21]}` ||
		got.RetryAfter == nil || *got.RetryAfter != 2 || len(got.List) != 1 || got.List[0].Report != "sent" {
		t.Fatalf("got %+v", got)
	}
	var strict struct {
		Target string `json:"target"`
	}
	if ok, err := p.CallInto(context.Background(), "f", &strict, "case"); !ok || err != nil || strict.Target != "x" {
		t.Fatalf("case-insensitive member: %v, %v, %+v", ok, err, strict)
	}
	var item decodeItem
	if _, err := p.CallInto(context.Background(), "f", &item, "ok"); ClassOf(err) != ClassOutputInvalid ||
		!strings.Contains(err.Error(), `json: unknown field "target"`) {
		t.Fatalf("unknown member: %v", err)
	}
}

// BenchmarkDecodeStrict measures CallInto's decode of a prepare result (the quickstart's shape)
// through the plan over the one reader's index, against encoding/json's strict decode, which
// gives the same value.
//
//	go test -run '^$' -bench BenchmarkDecodeStrict -benchmem ./scripting/
func BenchmarkDecodeStrict(b *testing.B) {
	raw := []byte(`{"target":"messages","headers":{"content-type":"application/json","x-request-id":"01J9Z5S8Q4W6Y2X0V7T3R1P9N5"},` +
		`"bodyFormat":"json","body":{"to":"+15550123456","from":"+15550100","text":"Reminder: your appointment at Riverside ` +
		`Clinic is on 2025-03-14 at 09:30. Reply STOP to opt out.","reference":"01J9Z5S8Q4W6Y2X0V7T3R1P9N5"}}`)
	var c planCache
	b.Run("plan", func(b *testing.B) {
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			var out preparedRequest
			if err := c.decodeStrict(raw, &out); err != nil || out.Body.To == "" {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		cpu := processCPU()
		for b.Loop() {
			var out preparedRequest
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&out); err != nil {
				b.Fatal(err)
			}
		}
		reportCPU(b, cpu)
	})
}
