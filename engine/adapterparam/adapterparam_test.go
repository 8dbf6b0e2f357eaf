package adapterparam

import (
	"strings"
	"testing"
)

func TestNamesAndValues(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{"accountId": true, "a": true, "region_2": true, "A1": true,
		"": false, "1a": false, "_a": false, "account-id": false, "é": false, strings.Repeat("a", 65): false, strings.Repeat("a", 64): true} {
		if ValidName(name) != want {
			t.Errorf("ValidName(%q) = %t", name, !want)
		}
	}
	if !ValidValue(strings.Repeat("é", MaxChars)) || ValidValue(strings.Repeat("é", MaxChars+1)) || ValidValue("\xff") {
		t.Error("ValidValue bounds")
	}
}
