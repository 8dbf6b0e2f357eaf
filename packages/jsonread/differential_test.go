package jsonread

import (
	"errors"
	"reflect"
	"testing"

	"switchboard/packages/jsonread/jsonreadtest"
)

// checkAgainstLibrary fails unless Read agrees with encoding/json on doc: lenient mode takes
// exactly what the library takes and decodes the same values; strict mode takes the same
// documents less exactly those that repeat a name or hold invalid Unicode, and says which.
func checkAgainstLibrary(t *testing.T, doc []byte) {
	t.Helper()
	ref := jsonreadtest.Of(doc)
	want, valid := ref.Value, ref.Valid
	lenient, lerr := Read(doc, Lenient)
	if (lerr == nil) != valid {
		t.Fatalf("Read(%.200q, Lenient) = %v; json.Valid says %v", doc, lerr, valid)
	}
	strict, serr := Read(doc, Strict)
	if !valid {
		if serr == nil {
			t.Fatalf("Read(%.200q) took what encoding/json refuses", doc)
		}
		return
	}
	if got := lenient.Root().Decode(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Read(%.200q, Lenient).Decode() = %#v; encoding/json: %#v", doc, got, want)
	}
	dup, badUTF8, lone := ref.RepeatsName, ref.InvalidUTF8, ref.LoneSurrogate
	if serr == nil {
		if dup || badUTF8 || lone {
			t.Fatalf("Read(%.200q) took a document with a repeated name (%v), invalid UTF-8 (%v) or a lone surrogate (%v)",
				doc, dup, badUTF8, lone)
		}
		if got := strict.Root().Decode(); !reflect.DeepEqual(got, want) {
			t.Fatalf("Read(%.200q).Decode() = %#v; encoding/json: %#v", doc, got, want)
		}
		return
	}
	var e *Error
	if !errors.As(serr, &e) {
		t.Fatalf("Read(%.200q): %T %v", doc, serr, serr)
	}
	switch e.Reason {
	case Duplicate:
		if !dup {
			t.Fatalf("Read(%.200q) found a repeated name that encoding/json does not see", doc)
		}
	case InvalidUTF8:
		if !badUTF8 {
			t.Fatalf("Read(%.200q) found invalid UTF-8 in valid UTF-8", doc)
		}
	case LoneSurrogate:
		if !lone {
			t.Fatalf("Read(%.200q) found a lone surrogate among paired ones", doc)
		}
	default:
		t.Fatalf("Read(%.200q) refused a valid document: %v", doc, serr)
	}
}

func TestReadAgreesWithLibrary(t *testing.T) {
	t.Parallel()
	for _, tc := range readCases {
		checkAgainstLibrary(t, []byte(tc.doc))
	}
}

// FuzzReadAgainstLibrary is the differential fuzzer: for any input, Read agrees with
// encoding/json as checkAgainstLibrary says.
func FuzzReadAgainstLibrary(f *testing.F) {
	for _, tc := range readCases {
		f.Add([]byte(tc.doc))
	}
	f.Add([]byte(`{"senderProfile":"reminders-sms","to":{"phone":"+15550100123"},"data":{"a":[1,{"b":null}]}}`))
	f.Add([]byte(`{"a\\":1,"a\\\\":2,"\\u0061":3}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkAgainstLibrary(t, doc)
	})
}
