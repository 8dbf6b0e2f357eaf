package api

import (
	"errors"
	"testing"

	"switchboard/engine"
)

// FuzzDecodeSubmission feeds arbitrary bodies through the submission decoder and the request
// hash. It must never panic; every refusal is a request.invalid problem that does not echo the
// body; and a body it accepts hashes the same after a second decode.
func FuzzDecodeSubmission(f *testing.F) {
	for _, seed := range []string{
		`{"senderProfile":"reminders-sms","to":{"phone":"+15550100123"},"template":{"id":"t","version":"1"},"locale":"en","data":{"a":1}}`,
		`{"senderProfile":"x","to":{"email":"a@b.c"},"content":{"text":"hi","subject":"s"},"expiresAt":"2026-12-01T00:00:00Z"}`,
		`{"to":{"peer":"12D3KooW"},"notBefore":"not a time"}`,
		`{"senderProfile":1}`, `[]`, `{} {}`, `{"unknown":true}`, `{"data":{"deep":[[[[[[[[1]]]]]]]]}}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var req engine.SubmitRequest
		err := decodeStrict(body, &req)
		if err != nil {
			var p *engine.Problem
			if !errors.As(err, &p) || p.Code != engine.CodeRequestInvalid {
				t.Fatalf("refusal %v is not a request.invalid problem", err)
			}
			if len(body) > 12 && len(p.Detail) >= len(body) && p.Detail == string(body) {
				t.Fatalf("the problem echoes the body")
			}
			return
		}
		h1, err1 := engine.RequestHash(body)
		h2, err2 := engine.RequestHash(body)
		if (err1 == nil) != (err2 == nil) || string(h1) != string(h2) {
			t.Fatalf("request hash is not stable: %x %v / %x %v", h1, err1, h2, err2)
		}
	})
}
