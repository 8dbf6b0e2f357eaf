package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"
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
	"repeated name":          `{"a":1,"b":2,"a":{"x":3}}`,
	"repeated escaped name":  `{"a":1,"\u0061":2}`,
	"escaped names sort":     `{"\u00e9":1,"z":2,"\t":3,"é":4}`,
	"html characters":        `{"t":"<b>&amp;</b>","<":">"}`,
	"escapes":                `{"t":"line\nbreak \"quoted\" back\\slash \/ \b\f\r\t \u0001 \u001f \u007f"}`,
	"separators":             `{"t":"a\u2028b\u2029c"}`,
	"raw separators":         "{\"t\":\"a\u2028b\u2029c\"}",
	"surrogates":             `{"t":"\ud83d\ude00 \ud800 \udc00x"}`,
	"invalid utf-8":          "{\"t\":\"a\xffb\xc3\",\"\xfe\":1}",
	"non-ascii":              `{"t":"Zürich – 東京 😀"}`,
	"numbers as written":     `[0,-0,1.0,1e2,1E+2,-1.5e-10,12345678901234567890.5]`,
	"empty containers":       `{"a":{},"b":[],"c":[{}],"d":""}`,
	"scalar top level":       ` "just a string" `,
	"number top level":       `42`,
	"literal top level":      `null`,
	"nested objects":         `{"b":{"d":{"f":1,"e":2},"c":[{"y":1,"x":2}]},"a":0}`,
	"members after an array": `{"b":[1,[2,[3]]],"a":[],"c":{"e":[{"g":1,"f":2}],"d":3}}`,
	"trailing value":         `{"b":1,"a":2} {"c":3}`,
	"trailing garbage":       `{"b":1}x`,
}

func TestRequestHashMatchesMarshalledForm(t *testing.T) {
	t.Parallel()
	for name, body := range requestHashCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, wantErr := marshalledHash([]byte(body))
			got, err := RequestHash([]byte(body))
			if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
				t.Fatalf("RequestHash = %x, %v; the marshalled form hashes to %x, %v", got, err, want, wantErr)
			}
		})
	}
}

func TestRequestHashIgnoresFormattingNotValues(t *testing.T) {
	t.Parallel()
	a, _ := RequestHash([]byte(`{"a":1,"b":{"c":"x","d":[1,2]}}`))
	b, _ := RequestHash([]byte("{ \"b\" : { \"d\" : [ 1 , 2 ] , \"c\" : \"x\" } ,\n \"a\" : 1 }"))
	c, _ := RequestHash([]byte(`{"a":1,"b":{"c":"x","d":[2,1]}}`))
	d, _ := RequestHash([]byte(`{"a":1.0,"b":{"c":"x","d":[1,2]}}`))
	if !bytes.Equal(a, b) {
		t.Fatal("formatting changed the hash")
	}
	if bytes.Equal(a, c) || bytes.Equal(a, d) {
		t.Fatal("a different value gave the same hash")
	}
}

func TestRequestHashRefusesWhatDoesNotDecode(t *testing.T) {
	t.Parallel()
	for _, body := range []string{``, `   `, `{`, `{"a":}`, `x{}`, `[1,]`} {
		if _, err := RequestHash([]byte(body)); err == nil {
			t.Errorf("RequestHash(%q) succeeded", body)
		}
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
	got, err := RequestHash([]byte(body))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("deep body: %x, %v; want %x", got, err, want)
	}
}

func FuzzRequestHash(f *testing.F) {
	for _, body := range requestHashCases {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, wantErr := marshalledHash(body)
		got, err := RequestHash(body)
		if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("RequestHash(%q) = %x, %v; the marshalled form hashes to %x, %v", body, got, err, want, wantErr)
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
