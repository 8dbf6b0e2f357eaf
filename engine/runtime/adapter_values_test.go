package runtime

import (
	"strings"
	"testing"
)

func TestLoadPublicURLGivesCallbackURLs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, doc(map[string]string{
		"publicUrl": `publicUrl: "https://sb.example/base"`,
		"providers": withHTTP(`    callbackVerifier: {kind: path-token, tokenRef: "secret:file/path-token"}`),
	}))
	if got := rt.PublicURL.String(); got != "https://sb.example/base/" {
		t.Errorf("PublicURL = %s", got)
	}
	if got, want := rt.CallbackURL("sms"), "https://sb.example/base/v1/provider-callbacks/sms/"+pathTokenValue; got != want {
		t.Errorf("CallbackURL = %s, want %s", got, want)
	}
	if rt.CallbackURL("absent") != "" {
		t.Error("a callback URL for a provider the runtime does not connect")
	}
	plain := b.mustLoad(t, doc(map[string]string{"publicUrl": `publicUrl: "http://127.0.0.1:8107"`, "providers": withHTTP()}))
	if got := plain.CallbackURL("sms"); got != "http://127.0.0.1:8107/v1/provider-callbacks/sms" {
		t.Errorf("CallbackURL = %s", got)
	}
	none := b.mustLoad(t, doc(map[string]string{"providers": withHTTP()}))
	if none.PublicURL != nil || none.CallbackURL("sms") != "" {
		t.Errorf("without publicUrl: %v %q", none.PublicURL, none.CallbackURL("sms"))
	}
}

func TestLoadRefusesBadPublicURL(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`"http://sb.example/"`, `"ftp://sb.example/"`, `"/relative"`,
		`"https://user:pw@sb.example/"`, `"https://sb.example/?a=1"`, `"https://sb.example/#x"`} {
		b := setup(t)
		_, err := b.load(t, doc(map[string]string{"publicUrl": "publicUrl: " + bad}))
		requireDiag(t, err, CodeInvalid, "publicUrl")
	}
}

func TestLoadParameters(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env["REGION"] = "eu-west-1"
	rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(
		`    parameters: {accountId: "AC123", region: "${REGION}", empty: ""}`)}))
	p := rt.Providers["sms"].HTTP.Parameters
	if len(p) != 3 || p["accountId"] != "AC123" || p["region"] != "eu-west-1" || p["empty"] != "" {
		t.Fatalf("Parameters = %v", p)
	}
	if none := b.mustLoad(t, doc(map[string]string{"providers": withHTTP()})).Providers["sms"].HTTP.Parameters; none == nil || len(none) != 0 {
		t.Fatalf("Parameters without any = %v, want an empty map", none)
	}
}

func TestLoadRefusesBadParameters(t *testing.T) {
	t.Parallel()
	var many []string
	for i := range 33 {
		many = append(many, "p"+strings.Repeat("x", i)+": v")
	}
	tests := []struct{ name, params, member, contains string }{
		{"a secret reference", `{token: "secret:file/sms-token"}`, "providers.sms.parameters.token", "never hold secrets"},
		{"a bad name", `{account-id: x}`, "providers.sms.parameters.account-id", "letter"},
		{"too long a value", `{a: "` + strings.Repeat("x", 257) + `"}`, "providers.sms.parameters.a", "256"},
		{"a list value", `{a: [x]}`, "providers.sms.parameters.a", "single value"},
		{"not a mapping", `[a, b]`, "providers.sms.parameters", "mapping"},
		{"too many", "{" + strings.Join(many, ", ") + "}", "providers.sms.parameters", "at most 32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.load(t, doc(map[string]string{"providers": withHTTP("    parameters: " + tc.params)}))
			d := requireDiag(t, err, CodeInvalid, tc.member)
			if !strings.Contains(d.String(), tc.contains) {
				t.Errorf("diagnostic %q does not mention %q", d.String(), tc.contains)
			}
			if strings.Contains(err.Error(), smsTokenValue) {
				t.Errorf("the diagnostic shows a secret: %v", err)
			}
		})
	}
}
