package api

import (
	"reflect"
	"testing"

	"switchboard/engine"
)

// fastDecodeCases are bodies the fast decoder must decode as the strict decoder does, or leave
// to it.
var fastDecodeCases = map[string]struct {
	body string
	fast bool // whether the fast decoder takes it
}{
	"template":          {`{"senderProfile":"reminders-sms","to":{"phone":"+15550100123"},"template":{"id":"t","version":"1"},"locale":"en","data":{"a":1,"b":[true,null]}}`, true},
	"content and times": {" {\n \"senderProfile\" : \"x\", \"to\":{\"email\":\"a@b.c\"},\"content\":{\"text\":\"hi\",\"subject\":\"s\"},\"notBefore\":\"2026-11-30T10:00:00+01:00\",\"expiresAt\":\"2026-12-01T00:00:00Z\",\"correlationId\":\"c-1\"} ", true},
	"escaped strings":   {`{"senderProfile":"a\u0062\n\"c\"","to":{"peer":"12D3KooW\/x"},"locale":"\u00e9"}`, true},
	"invalid utf-8":     {"{\"senderProfile\":\"a\xffb\"}", true},
	"chat address":      {`{"senderProfile":"team-chat","to":{"address":"C0123ABCD"},"content":{"text":"hi"}}`, true},
	"repeated address":  {`{"to":{"address":"a","address":"b"}}`, false},
	"data of any kind":  {`{"data":"text"}`, true},
	"data number":       {`{"data": 12.50 }`, true},
	"empty object":      {`{}`, true},
	"empty nested":      {`{"to":{},"template":{},"content":{}}`, true},
	"data null":         {`{"data":null}`, false},
	"string null":       {`{"senderProfile":null}`, false},
	"template null":     {`{"template":null}`, false},
	"folded name":       {`{"SenderProfile":"x"}`, false},
	"escaped name":      {`{"\u0073enderProfile":"x"}`, false},
	"repeated name":     {`{"locale":"en","locale":"fr"}`, false},
	"repeated nested":   {`{"template":{"id":"a","id":"b"}}`, false},
	"unknown member":    {`{"unknown":true}`, false},
	"unknown nested":    {`{"to":{"fax":"1"}}`, false},
	"wrong type":        {`{"senderProfile":1}`, false},
	"wrong nested type": {`{"to":{"phone":1}}`, false},
	"bad time":          {`{"expiresAt":"tomorrow"}`, false},
	"time not a string": {`{"expiresAt":5}`, false},
	"not an object":     {`[]`, false},
	"null body":         {`null`, false},
	"two values":        {`{} {}`, false},
	"not json":          {`{"a":`, false},
	"empty":             {``, false},
}

func TestDecodeSubmitRequestMatchesStrictDecoder(t *testing.T) {
	t.Parallel()
	for name, tc := range fastDecodeCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got, ok := engine.DecodeSubmitRequest([]byte(tc.body))
			if ok != tc.fast {
				t.Fatalf("fast decoder took it: %v, want %v", ok, tc.fast)
			}
			if ok {
				checkSameAsStrict(t, []byte(tc.body), got)
			}
		})
	}
}

func checkSameAsStrict(t *testing.T, body []byte, got engine.SubmitRequest) {
	t.Helper()
	var want engine.SubmitRequest
	if err := decodeStrict(body, &want); err != nil {
		t.Fatalf("the fast decoder took %q, which the strict decoder refuses: %v", body, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("fast decoder gave %+v, strict decoder %+v", got, want)
	}
}

// FuzzDecodeSubmitRequest checks that whatever the fast decoder takes, the strict decoder takes
// too and decodes the same way.
func FuzzDecodeSubmitRequest(f *testing.F) {
	for _, tc := range fastDecodeCases {
		f.Add([]byte(tc.body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if got, ok := engine.DecodeSubmitRequest(body); ok {
			checkSameAsStrict(t, body, got)
		}
	})
}
