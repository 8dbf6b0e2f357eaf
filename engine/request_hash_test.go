package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"switchboard/packages/jsonread"
)

// marshalledHash is the definition RequestHash must keep: decode with UseNumber, marshal, hash.
func marshalledHash(body []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canon)
	return sum[:], nil
}

// requestHashCases are bodies whose canonical form is easy to get wrong.
var requestHashCases = map[string]string{
	"submission":             `{"senderProfile":"reminders-sms","to":{"phone":"+15550100123"},"template":{"id":"t","version":"1"},"locale":"en","data":{"clinicName":"Riverside","date":"2026-10-01","n":1.50}}`,
	"unsorted with space":    " {\n\t\"b\" : [1, 2 ,{\"z\":null,\"a\":true}] ,\r\"a\":false } \n",
	"escaped names sort":     `{"\u00e9":1,"z":2,"\t":3,"é4":4}`,
	"html characters":        `{"t":"<b>&amp;</b>","<":">"}`,
	"escapes":                `{"t":"line\nbreak \"quoted\" back\\slash \/ \b\f\r\t \u0001 \u001f \u007f"}`,
	"separators":             `{"t":"a\u2028b\u2029c"}`,
	"raw separators":         "{\"t\":\"a\u2028b\u2029c\"}",
	"surrogate pairs":        `{"t":"\ud83d\ude00 \uDBFF\uDFFF x"}`,
	"non-ascii":              `{"t":"Zürich – 東京 😀"}`,
	"numbers as written":     `[0,-0,1.0,1e2,1E+2,-1.5e-10,12345678901234567890.5]`,
	"empty containers":       `{"a":{},"b":[],"c":[{}],"d":""}`,
	"scalar top level":       ` "just a string" `,
	"number top level":       `42`,
	"literal top level":      `null`,
	"nested objects":         `{"b":{"d":{"f":1,"e":2},"c":[{"y":1,"x":2}]},"a":0}`,
	"members after an array": `{"b":[1,[2,[3]]],"a":[],"c":{"e":[{"g":1,"f":2}],"d":3}}`,
}

// refusedBodies are bodies the hash used to take (encoding/json forgives them) and that the
// API's reader now refuses, so that they never reach it.
var refusedBodies = map[string]string{
	"repeated name":         `{"a":1,"b":2,"a":{"x":3}}`,
	"repeated escaped name": `{"a":1,"\u0061":2}`,
	"lone surrogates":       `{"t":"\ud800 \udc00x"}`,
	"invalid utf-8":         "{\"t\":\"a\xffb\xc3\",\"\xfe\":1}",
	"trailing value":        `{"b":1,"a":2} {"c":3}`,
	"trailing garbage":      `{"b":1}x`,
}

// requestHash reads body as the API does and hashes it.
func requestHash(t testing.TB, body string) []byte {
	t.Helper()
	doc, err := jsonread.Read([]byte(body), jsonread.Strict)
	if err != nil {
		t.Fatalf("the reader refuses %q: %v", body, err)
	}
	return RequestHash(doc)
}

func TestRequestHashMatchesMarshalledForm(t *testing.T) {
	t.Parallel()
	for name, body := range requestHashCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := marshalledHash([]byte(body))
			if err != nil {
				t.Fatal(err)
			}
			if got := requestHash(t, body); !bytes.Equal(got, want) {
				t.Fatalf("RequestHash = %x; the marshalled form hashes to %x", got, want)
			}
		})
	}
}

// TestRequestHashIsPinned holds hashes that stored idempotency records carry: they were written
// by the hash before the strict reader, and a body that is still accepted must hash the same.
func TestRequestHashIsPinned(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"senderProfile":"reminders-sms","to":{"phone":"+15550100123"},"template":{"id":"appointment-reminder-sms","version":"1"},"locale":"en","data":{"clinicName":"Riverside Clinic","date":"2026-10-01","time":"09:30"}}`: "0b94c718ed68d2f14a67dc5de125831778483a4e68cd86b86fccb5224ece0ed6",
		" {\n\t\"b\" : [1, 2 ,{\"z\":null,\"a\":true}] ,\r\"a\":false } \n":                                                                                             "c89eeb3db4d14c2f67b566dbe146c9d4ec7a3e98d5c273726a5b75af13c9b731",
		`{"\u00e9":1,"z":2,"\t":3,"e\u0301":4,"t":"<b>&amp;</b> \u2028\u2029 \ud83d\ude00 \u0001\u001f\u007f","n":[0,-0,1.0,1e2,1E+2,-1.5e-10,12345678901234567890.5]}`: "0a06af324c13dcea9dd485dda4090688c51a3eadbdbf6975980f74ea4f2e0048",
		`{"correlationId":"Zürich – 東京 😀","content":{"text":"line\nbreak \"quoted\" back\\slash \/"},"senderProfile":"x","to":{"email":"a@b.c"}}`:                       "ab3bf8f7aba06ddb15be5c60fb5da097d42a9116a3e9946a6a7879d5e6c9f5ac",
	} {
		if got := hex.EncodeToString(requestHash(t, body)); got != want {
			t.Errorf("RequestHash(%q) = %s, stored records hold %s", body, got, want)
		}
	}
}

func TestReaderRefusesWhatTheHashMustNotSee(t *testing.T) {
	t.Parallel()
	for name, body := range refusedBodies {
		if _, err := jsonread.Read([]byte(body), jsonread.Strict); err == nil {
			t.Errorf("%s: the reader takes %q", name, body)
		}
	}
}

func TestRequestHashIgnoresFormattingNotValues(t *testing.T) {
	t.Parallel()
	a := requestHash(t, `{"a":1,"b":{"c":"x","d":[1,2]}}`)
	b := requestHash(t, "{ \"b\" : { \"d\" : [ 1 , 2 ] , \"c\" : \"x\" } ,\n \"a\" : 1 }")
	c := requestHash(t, `{"a":1,"b":{"c":"x","d":[2,1]}}`)
	d := requestHash(t, `{"a":1.0,"b":{"c":"x","d":[1,2]}}`)
	if !bytes.Equal(a, b) {
		t.Fatal("formatting changed the hash")
	}
	if bytes.Equal(a, c) || bytes.Equal(a, d) {
		t.Fatal("a different value gave the same hash")
	}
}

func TestRequestHashStaysLinearWhenDeep(t *testing.T) {
	t.Parallel()
	// Each level has two members out of order, so every object is sorted.
	const depth = 9000
	body := strings.Repeat(`{"b":1,"a":`, depth) + "0" + strings.Repeat("}", depth)
	want, err := marshalledHash([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if got := requestHash(t, body); !bytes.Equal(got, want) {
		t.Fatalf("deep body: %x; want %x", got, want)
	}
}

// FuzzRequestHash is the hash's differential fuzzer: every body the reader takes hashes as its
// marshalled form does.
func FuzzRequestHash(f *testing.F) {
	for _, body := range requestHashCases {
		f.Add([]byte(body))
	}
	for _, body := range refusedBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		doc, err := jsonread.Read(body, jsonread.Strict)
		if err != nil {
			return
		}
		want, err := marshalledHash(body)
		if err != nil {
			t.Fatalf("encoding/json refuses %q, which the reader takes: %v", body, err)
		}
		if got := RequestHash(doc); !bytes.Equal(got, want) {
			t.Fatalf("RequestHash(%q) = %x; the marshalled form hashes to %x", body, got, want)
		}
	})
}

func TestAcceptedResponseIsTheMarshalledBody(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"0196a3c5-7b1e-7c2d-9f00-1a2b3c4d5e6f", "", `needs "escaping" <&>`} {
		want, err := json.Marshal(AcceptedBody{ID: id, Status: string(DispatchQueued), Links: MessageLinks(id)})
		if err != nil {
			t.Fatal(err)
		}
		got, err := acceptedResponse(id)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("acceptedResponse(%q) = %s, %v; want %s", id, got, err, want)
		}
	}
}
