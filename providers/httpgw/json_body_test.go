package httpgw

import (
	"bytes"
	"encoding/json"
	"mime"
	"reflect"
	"strings"
	"testing"
)

// decoderParseJSON is parseJSON with encoding/json's Decoder alone, the reference.
func decoderParseJSON(body []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// jsonBodies are gateway answers and near misses, including the Decoder's leniencies.
var jsonBodies = []string{
	`{"id":"gw-1"}`, `{"id":"gw-1","status":"delivered","to":"+15550123","at":"2026-03-02T09:30:05Z"}`,
	`[{"id":"a","status":"sent"},{"id":"b","status":"delivered"}]`, ` {"n": 12345678901234567890, "f": -1.5e-7} `,
	`null`, `"text"`, `0`, `{"a":1,"a":2}`, `{"s":"\u00e9\ud83d\ude00\n"}`, `{"s":"\ud800"}`, "{\"s\":\"\xff\"}",
	`{"a":1}}`, `{"a":1}]`, `{"a":1} x`, `{"a":1},`, `1 2`, `{"a":`, ``, `not json`, `[1,]`,
	strings.Repeat(`[`, 300) + strings.Repeat(`]`, 300),
}

// FuzzParseJSONBody: parseJSON, with scripting.ParseJSON in front, accepts exactly the
// bodies the Decoder alone accepts, with the same values.
func FuzzParseJSONBody(f *testing.F) {
	for _, b := range jsonBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotOK := parseJSON(body)
		want, wantOK := decoderParseJSON(body)
		if gotOK != wantOK || !reflect.DeepEqual(got, want) {
			t.Fatalf("parseJSON(%.200q) = %#v, %v; the Decoder gives %#v, %v", body, got, gotOK, want, wantOK)
		}
	})
}

// TestMediaType: mediaType reads what mime.ParseMediaType reads.
func TestMediaType(t *testing.T) {
	for _, ct := range []string{"application/json", "Application/JSON", "application/json; charset=utf-8", "text/plain", "", ";", "application/problem+json"} {
		want, _, _ := mime.ParseMediaType(ct)
		if got := mediaType(ct); got != want {
			t.Errorf("mediaType(%q) = %q, want %q", ct, got, want)
		}
	}
}
