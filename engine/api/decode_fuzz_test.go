package api

import (
	"bytes"
	"errors"
	"testing"

	"switchboard/engine"
)

// FuzzDecodeSubmission feeds arbitrary bodies through the reader, the submission decoder and
// the request hash. It must never panic; every refusal is a request.invalid problem whose detail
// is short printable ASCII (so no byte of the body can pass through it unseen); and a body it
// takes hashes the same when read a second time.
func FuzzDecodeSubmission(f *testing.F) {
	for _, seed := range []string{
		`{"senderProfile":"reminders-sms","to":{"phone":"+15550100123"},"template":{"id":"t","version":"1"},"locale":"en","data":{"a":1}}`,
		`{"senderProfile":"x","to":{"email":"a@b.c"},"content":{"text":"hi","subject":"s"},"expiresAt":"2026-12-01T00:00:00Z"}`,
		`{"to":{"peer":"12D3KooW"},"notBefore":"not a time"}`,
		`{"senderProfile":1}`, `[]`, `{} {}`, `{"unknown":true}`, `{"data":{"deep":[[[[[[[[1]]]]]]]]}}`, ``,
		`{"to":{"phone":"1"},"to":{"email":"a@b.c"}}`, "{\"correlationId\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, _, err := decodeBody(body)
		if err != nil {
			var p *engine.Problem
			if !errors.As(err, &p) || p.Code != engine.CodeRequestInvalid {
				t.Fatalf("refusal %v is not a request.invalid problem", err)
			}
			if len(p.Detail) > 160 {
				t.Fatalf("detail of %d bytes: %q", len(p.Detail), p.Detail)
			}
			for i := 0; i < len(p.Detail); i++ {
				if c := p.Detail[i]; c < 0x20 || c > 0x7e {
					t.Fatalf("detail holds byte %#x: %q", c, p.Detail)
				}
			}
			return
		}
		again, _, err := decodeBody(body)
		if err != nil {
			t.Fatalf("a second read refused %q: %v", body, err)
		}
		if !bytes.Equal(engine.RequestHash(doc), engine.RequestHash(again)) {
			t.Fatalf("the request hash of %q is not stable", body)
		}
	})
}
