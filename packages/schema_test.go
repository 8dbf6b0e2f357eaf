package packages

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestValidateData(t *testing.T) {
	t.Parallel()
	email := mustLoad(t, quickstartDir).Template("appointment-reminder", "1")
	if err := email.ValidateData(email.Sample); err != nil {
		t.Fatalf("sample: %v", err)
	}
	err := email.ValidateData(mustDecode(t, `{"patientName": "", "clinicName": "C", "date": "SECRET-DAY", "time": "09:30", "amountDue": -5, "extra~/key": 1, "plainExtra": 2}`))
	var de *DataError
	if !errors.As(err, &de) || de.Code() != CodeDataInvalid {
		t.Fatalf("error %T %v", err, err)
	}
	// A submitted member name is repeated only when it is a plain identifier; the exact pointer
	// stays in Paths.
	for _, want := range []string{"/patientName (minLength)", "/date (format)", "/amountDue (minimum)",
		"/* (additionalProperties)", "/plainExtra (additionalProperties)"} {
		if !strings.Contains(de.Message, want) {
			t.Errorf("message %q lacks %q", de.Message, want)
		}
	}
	if strings.Contains(de.Error(), "SECRET") || strings.Contains(de.Error(), "-5") || strings.Contains(de.Error(), "extra~") {
		t.Errorf("message echoes a value: %s", de.Error())
	}
	if !contains(de.Paths, "/date") || !contains(de.Paths, "/amountDue") || !contains(de.Paths, "/extra~0~1key") {
		t.Errorf("paths %v", de.Paths)
	}
	err = email.ValidateData(mustDecode(t, `{"clinicName": "C", "date": "2026-10-01"}`))
	if !errors.As(err, &de) || !strings.Contains(de.Message, "/patientName (required)") || !strings.Contains(de.Message, "/time (required)") {
		t.Errorf("required: %v", err)
	}
	err = email.ValidateData(mustDecode(t, `[1]`))
	if !errors.As(err, &de) || !strings.Contains(de.Message, "(root) (type)") {
		t.Errorf("root type: %v", err)
	}
}

func TestDecodeData(t *testing.T) {
	t.Parallel()
	v, err := DecodeData([]byte(`{"n": 12345678901234567890.5}`))
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := v.(map[string]any)["n"].(json.Number); !ok || n.String() != "12345678901234567890.5" {
		t.Errorf("number kept as %T %v", v.(map[string]any)["n"], v)
	}
	long := `{"a": [0, ` + strings.Repeat("7", 65) + `]}`
	_, err = DecodeData([]byte(long))
	var de *DataError
	if !errors.As(err, &de) || len(de.Paths) != 1 || de.Paths[0] != "/a/1" || strings.Contains(de.Error(), "777") {
		t.Errorf("long number: %v", err)
	}
	if _, err := DecodeData([]byte(`{"a": ` + strings.Repeat("7", 64) + `}`)); err != nil {
		t.Errorf("64-character number refused: %v", err)
	}
	for _, bad := range []string{``, `{`, `{"a": 1} {}`, `{"a": SECRET}`} {
		_, err := DecodeData([]byte(bad))
		var de *DataError
		if !errors.As(err, &de) || strings.Contains(de.Error(), "SECRET") {
			t.Errorf("DecodeData(%q) = %v", bad, err)
		}
	}
}
