package packages

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"switchboard/packages/jsonread"
	"switchboard/packages/jsonread/jsonreadtest"
)

// dataDecodeCases are documents whose decoded value is easy to get wrong.
var dataDecodeCases = []string{
	`{"clinicName": "Riverside Clinic", "date": "2026-10-01", "time": "09:30"}`,
	" {\n\t\"a\" : [ 1 , -0.5e+3 , true , false , null , { } , [ ] ] ,\r\"b\":{\"c\":\"\"} } ",
	`{"a":1,"a":{"x":2}}`,
	`{"\u0061":1,"a":2}`,
	`{"t":"line\nbreak \"q\" \\ \/ \b\f\r\t \u0001 \ud83d\ude00 x"}`,
	`{"t":"\ud800 x"}`,
	"{\"t\":\"a\xffb\",\"\xfe\":1}",
	`{"t":"Zürich – 東京 😀 <&>"}`,
	`[0,-0,1.0,1E2,12345678901234567890.5]`,
	`"just a string"`, `42`, `true`, `null`, `[]`, `{}`,
	`{"a":1} {"b":2}`, `{"a":1}x`, `{"a":`, ``, `   `,
}

// checkDecodedAsLibrary fails unless DecodeData gives the schema library's value for data the
// library decodes, and refuses it exactly when a strict reader must (a repeated name, invalid
// Unicode) or when it holds a number over 64 characters.
func checkDecodedAsLibrary(t *testing.T, raw []byte) {
	t.Helper()
	want, libErr := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	ref := jsonreadtest.Of(raw)
	got, err := DecodeData(raw)
	if libErr != nil || !ref.StrictOK() {
		if err == nil {
			t.Fatalf("DecodeData(%q) took what a strict reader refuses (library: %v)", raw, libErr)
		}
		return
	}
	if doc, rerr := jsonread.Read(raw, jsonread.Strict); rerr == nil {
		if _, _, long := longNumber(doc.Root()); long {
			if err == nil {
				t.Fatalf("DecodeData(%q) took a long number", raw)
			}
			return
		}
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

// FuzzDecodeDataMatchesLibraryDecoder is the differential fuzzer of template data: the one
// reader against the schema library's encoding/json decoding.
func FuzzDecodeDataMatchesLibraryDecoder(f *testing.F) {
	for _, raw := range dataDecodeCases {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkDecodedAsLibrary(t, raw)
	})
}

func TestDecodeDataRefusesWhatStrictReadingRefuses(t *testing.T) {
	t.Parallel()
	for raw, reason := range map[string]string{
		`{"a":1,"a":2}`:    "repeats a member name at byte 7",
		"{\"a\":\"\xff\"}": "not valid UTF-8 at byte 6",
		`["\udc00"]`:       "lone UTF-16 surrogate at byte 2",
	} {
		_, err := DecodeData([]byte(raw))
		var de *DataError
		if !errors.As(err, &de) || !strings.Contains(de.Message, reason) {
			t.Errorf("DecodeData(%q) = %v, want a DataError saying %q", raw, err, reason)
		}
	}
}

func TestDataOfAbsentValueIsAnEmptyObject(t *testing.T) {
	t.Parallel()
	v, err := DataOf(jsonread.Value{})
	if err != nil || !reflect.DeepEqual(v, map[string]any{}) {
		t.Fatalf("DataOf(absent) = %#v, %v", v, err)
	}
}

func TestLongNumberPointerHidesNamesThatAreNotPlain(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("7", 65)
	_, err := DecodeData([]byte(`{"ok":1,"plainName":[0,{"not plain!":` + long + `}]}`))
	var de *DataError
	if !errors.As(err, &de) || de.Paths[0] != "/plainName/1/not plain!" || !strings.HasSuffix(de.Message, " at /plainName/1/*") {
		t.Fatalf("long number: %#v", err)
	}
}
