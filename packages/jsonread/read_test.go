package jsonread

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// readCases are documents with what strict mode says of them (0: accepted).
var readCases = []struct {
	doc    string
	strict Reason
}{
	{`{}`, 0}, {`[]`, 0}, {`""`, 0}, {`0`, 0}, {`-0`, 0}, {`1.5e+10`, 0}, {`-12.0E-3`, 0},
	{`true`, 0}, {`false`, 0}, {`null`, 0}, {" \t\r\n[1, 2 ]\n", 0},
	{`{"a":{"b":[1,{"c":null}]},"d":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`, 0},
	{`{"a":1,"b":{"a":2},"c":[{"a":3},{"a":4}]}`, 0},
	{`{"é":1,"\u00e9":2}`, Duplicate},
	{`{"a":1,"a":2}`, Duplicate},
	{`{"a":1,"\u0061":2}`, Duplicate},
	{`{"x":{"to":1,"to":2}}`, Duplicate},
	{`[{"a":1},{"b":{"c":1,"d":2,"c":3}}]`, Duplicate},
	{"\"\xff\"", InvalidUTF8}, {"{\"\xfe\":1}", InvalidUTF8}, {"\"\xed\xa0\x80\"", InvalidUTF8},
	{`"\ud800"`, LoneSurrogate}, {`"\udc00"`, LoneSurrogate}, {`"\ud800\u0041"`, LoneSurrogate},
	{`"\ud800\ud800"`, LoneSurrogate}, {`"a\uDBFF\uDFFFb"`, 0},
	{``, Empty}, {` `, Empty}, {`{} {}`, Trailing}, {`{}x`, Trailing}, {`[]]`, Trailing}, {`01`, Trailing},
	{`{`, Syntax}, {`}`, Syntax}, {`[1,]`, Syntax}, {`{"a":1,}`, Syntax}, {`{"a"}`, Syntax},
	{`{"a" 1}`, Syntax}, {`{1:2}`, Syntax}, {`[1 2]`, Syntax}, {`-`, Syntax}, {`1.`, Syntax},
	{`.5`, Syntax}, {`1e`, Syntax}, {`1e+`, Syntax}, {`+1`, Syntax}, {`tru`, Syntax},
	{`nul`, Syntax}, {`[true false]`, Syntax}, {`"a`, Syntax}, {`"\x"`, Syntax}, {`"\u12"`, Syntax},
	{`"\u12g4"`, Syntax}, {"\"a\tb\"", Syntax}, {"\"\x00\"", Syntax}, {`"\`, Syntax}, {`[`, Syntax},
	{`{"a":`, Syntax},
}

func TestReadStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range readCases {
		_, err := Read([]byte(tc.doc), Strict)
		var e *Error
		switch {
		case tc.strict == 0 && err != nil:
			t.Errorf("Read(%q) refused: %v", tc.doc, err)
		case tc.strict != 0 && (!errors.As(err, &e) || e.Reason != tc.strict):
			t.Errorf("Read(%q) = %v, want reason %q", tc.doc, err, tc.strict)
		}
	}
}

func TestReadLenientTakesWhatStrictRefusesForUnicodeAndNames(t *testing.T) {
	t.Parallel()
	for _, tc := range readCases {
		_, err := Read([]byte(tc.doc), Lenient)
		forgiven := tc.strict == Duplicate || tc.strict == InvalidUTF8 || tc.strict == LoneSurrogate
		if (err == nil) != (tc.strict == 0 || forgiven) {
			t.Errorf("Read(%q, Lenient) = %v", tc.doc, err)
		}
	}
}

func TestDuplicatesInLargeObjects(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("{")
	for i := range 100 {
		b.WriteString(`"m` + strings.Repeat("x", i) + `":1,`)
	}
	ok := b.String() + `"last":{"m":1}}`
	if _, err := Read([]byte(ok), Strict); err != nil {
		t.Fatalf("100 distinct names refused: %v", err)
	}
	for _, dup := range []string{`"mxxxxx":2}`, `"m\u0078x":2}`, `"last":2}`} {
		if _, err := Read([]byte(b.String()+`"last":1,`+dup), Strict); err == nil || err.(*Error).Reason != Duplicate {
			t.Errorf("a repeated name after 100 members (%s): %v", dup, err)
		}
	}
}

func TestErrorOffsetAndMessageQuoteNothing(t *testing.T) {
	t.Parallel()
	_, err := Read([]byte(`{"secret-name":1,"secret-name":2}`), Strict)
	var e *Error
	if !errors.As(err, &e) || e.Offset != 17 {
		t.Fatalf("err = %v, want a duplicate at byte 17", err)
	}
	if strings.Contains(err.Error(), "secret") {
		t.Fatalf("the message quotes the document: %v", err)
	}
}

func TestDepthLimit(t *testing.T) {
	t.Parallel()
	for depth, want := range map[int]bool{MaxDepth: true, MaxDepth + 1: false} {
		doc := strings.Repeat("[", depth) + strings.Repeat("]", depth)
		if _, err := Read([]byte(doc), Strict); (err == nil) != want {
			t.Errorf("depth %d: %v", depth, err)
		}
	}
}

func TestValueWalk(t *testing.T) {
	t.Parallel()
	d, err := Read([]byte(` {"s":"a\nb","n":-1.50,"t":true,"f":false,"z":null,"l":[1,[2],{}],"o":{"k":"v"}} `), Strict)
	if err != nil {
		t.Fatal(err)
	}
	root := d.Root()
	if root.Kind() != Object || root.Len() != 7 || d.End() != 80 {
		t.Fatalf("root: kind %d, %d members, ends at %d", root.Kind(), root.Len(), d.End())
	}
	got := map[string]Value{}
	root.Members(func(name, val Value) bool {
		got[name.Text()] = val
		return true
	})
	if got["s"].Text() != "a\nb" || string(got["n"].Raw()) != "-1.50" || !got["t"].Bool() || got["f"].Bool() ||
		got["z"].Kind() != Null || got["l"].Len() != 3 || got["o"].Len() != 1 {
		t.Fatalf("members read wrong: %v", got)
	}
	var kinds []Kind
	got["l"].Elements(func(e Value) bool { kinds = append(kinds, e.Kind()); return true })
	if !reflect.DeepEqual(kinds, []Kind{Number, Array, Object}) {
		t.Fatalf("element kinds %v", kinds)
	}
	var none Value
	if none.Exists() || none.Kind() != Absent || none.Text() != "" || none.Decode() != nil || none.Len() != 0 {
		t.Fatal("the zero Value is not absent")
	}
}

func TestAllowTrailingReadsTheFirstValue(t *testing.T) {
	t.Parallel()
	for doc, end := range map[string]int{`123abc`: 3, `{"a":1}}`: 7, `1 2`: 1, `01`: 1, `nullx`: 4, ` [] `: 3} {
		d, err := Read([]byte(doc), Lenient|AllowTrailing)
		if err != nil {
			t.Errorf("Read(%q, AllowTrailing): %v", doc, err)
		} else if d.End() != end {
			t.Errorf("Read(%q, AllowTrailing) ends at %d, want %d", doc, d.End(), end)
		}
	}
}

func TestPlainName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"senderProfile": true, "_x": true, "a1": true, strings.Repeat("a", 64): true,
		"": false, "1a": false, "a-b": false, "a.b": false, "é": false, "a b": false, strings.Repeat("a", 65): false,
	} {
		if PlainName(name) != want {
			t.Errorf("PlainName(%q) = %v", name, !want)
		}
	}
}
