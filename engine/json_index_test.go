package engine

import (
	"encoding/json"
	"strings"
	"testing"
)

// jsonValidityCases are documents on either side of the JSON grammar.
var jsonValidityCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.0E-3`, `true`, `false`, `null`, " \t\r\n[1, 2 ]\n",
	`{"a":{"b":[1,{"c":null}]},"d":"\"\\\/\b\f\n\r\t\u00e9\uD83D"}`, "\"\xff\xfe\"",
	``, ` `, `{`, `}`, `[1,]`, `{"a":1,}`, `{"a"}`, `{"a" 1}`, `{1:2}`, `[1 2]`, `01`, `-`, `1.`, `.5`,
	`1e`, `1e+`, `+1`, `tru`, `truex`, `nul`, `[true false]`, `"a`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"a\tb\"", "\"\x00\"", `{} {}`, `{}x`, `[]]`, `"\`, `[`, `{"a":`,
}

func TestIndexJSONAgreesWithValid(t *testing.T) {
	t.Parallel()
	for _, doc := range jsonValidityCases {
		if _, ok := indexJSON([]byte(doc)); ok != json.Valid([]byte(doc)) {
			t.Errorf("indexJSON(%q) ok = %v, json.Valid says %v", doc, ok, !ok)
		}
	}
}

func TestIndexJSONDepthLimit(t *testing.T) {
	t.Parallel()
	for _, depth := range []int{maxJSONDepth, maxJSONDepth + 1} {
		doc := []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
		if _, ok := indexJSON(doc); ok != json.Valid(doc) {
			t.Errorf("depth %d: indexJSON ok = %v, json.Valid says %v", depth, ok, !ok)
		}
	}
}

func FuzzIndexJSONAgreesWithValid(f *testing.F) {
	for _, doc := range jsonValidityCases {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if _, ok := indexJSON(doc); ok != json.Valid(doc) {
			t.Fatalf("indexJSON(%q) ok = %v, json.Valid says %v", doc, ok, !ok)
		}
	})
}
