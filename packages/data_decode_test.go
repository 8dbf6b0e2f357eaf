package packages

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// dataDecodeCases are documents whose decoded value is easy to get wrong.
var dataDecodeCases = []string{
	`{"clinicName": "Riverside Clinic", "date": "2026-10-01", "time": "09:30"}`,
	" {\n\t\"a\" : [ 1 , -0.5e+3 , true , false , null , { } , [ ] ] ,\r\"b\":{\"c\":\"\"} } ",
	`{"a":1,"a":{"x":2}}`,
	`{"\u0061":1,"a":2}`,
	`{"t":"line\nbreak \"q\" \\ \/ \b\f\r\t \u0001 \ud83d\ude00 \ud800 x"}`,
	"{\"t\":\"a\xffb\",\"\xfe\":1}",
	`{"t":"Zürich – 東京 😀 <&>"}`,
	`[0,-0,1.0,1E2,12345678901234567890.5]`,
	`"just a string"`, `42`, `true`, `null`, `[]`, `{}`,
	`{"a":1} {"b":2}`, `{"a":1}x`, `{"a":`, ``, `   `,
}

// decodedByLibrary is the value DecodeData must give: the schema library's decoder.
func decodedByLibrary(raw []byte) (any, bool) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	return v, err == nil
}

func checkDecodedAsLibrary(t *testing.T, raw []byte) {
	t.Helper()
	want, wantOK := decodedByLibrary(raw)
	got, err := DecodeData(raw)
	if !wantOK {
		if err == nil {
			t.Fatalf("DecodeData(%q) took what the library refuses", raw)
		}
		return
	}
	if _, long := longNumber(want, ""); long {
		if err == nil {
			t.Fatalf("DecodeData(%q) took a long number", raw)
		}
		return
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("DecodeData(%q) = %#v, %v; the library decodes %#v", raw, got, err, want)
	}
}

func TestDecodeDataMatchesLibraryDecoder(t *testing.T) {
	t.Parallel()
	for _, raw := range dataDecodeCases {
		checkDecodedAsLibrary(t, []byte(raw))
	}
}

func FuzzDecodeDataMatchesLibraryDecoder(f *testing.F) {
	for _, raw := range dataDecodeCases {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkDecodedAsLibrary(t, raw)
	})
}
