package jsonread

import (
	"bytes"
	"encoding/json"
	"testing"
)

// benchDocs are what the reader reads on the hot paths: a submission body (indexed strictly,
// then walked) and a gateway's answer (decoded leniently into plain values).
var benchDocs = map[string][]byte{
	"submission": []byte(`{"data":{"clinicName":"Riverside Clinic","date":"2026-10-01","time":"09:30"},"locale":"en",` +
		`"senderProfile":"reminders-sms","template":{"id":"appointment-reminder-sms","version":"1"},"to":{"phone":"+15550100123"}}`),
	"gateway-answer": []byte(`{"messages":[{"to":"+15550100123","status":{"groupId":1,"groupName":"PENDING","id":26,` +
		`"name":"PENDING_ENROUTE","description":"Message sent to next instance"},"messageId":"2250be2d4219-3af1-78856-aabe-1362af1edfd2"}]}`),
}

// BenchmarkRead measures indexing a document (with the strict checks) against json.Valid, the
// cheapest pass encoding/json makes over a document, which checks less.
//
//	go test -run '^$' -bench BenchmarkRead -benchmem ./packages/jsonread/
func BenchmarkRead(b *testing.B) {
	for name, doc := range benchDocs {
		b.Run(name+"/jsonread", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if _, err := Read(doc, Strict); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/encoding-json-valid", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				if !json.Valid(doc) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkDecode measures reading a document into plain Go values against encoding/json's
// Decoder with UseNumber, which gives the same values.
func BenchmarkDecode(b *testing.B) {
	for name, doc := range benchDocs {
		b.Run(name+"/jsonread", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				d, err := Read(doc, Lenient)
				if err != nil {
					b.Fatal(err)
				}
				_ = d.Root().Decode()
			}
		})
		b.Run(name+"/encoding-json", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(doc)))
			for b.Loop() {
				dec := json.NewDecoder(bytes.NewReader(doc))
				dec.UseNumber()
				var v any
				if err := dec.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
