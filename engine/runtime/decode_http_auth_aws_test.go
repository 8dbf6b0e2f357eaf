package runtime

import (
	"strings"
	"testing"
)

func TestLoadAWSSigV4(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env["AWS_ACCESS_KEY_ID"] = "AKIDEXAMPLE"
	b.env["AWS_SECRET_ACCESS_KEY"] = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
	rt := b.mustLoad(t, doc(map[string]string{
		"secrets": "secrets: {file: {root: ./secrets}, env: {}}",
		"providers": withHTTP(`    authentication: {kind: aws-sigv4, service: sns, region: eu-west-1, accessKeyIdRef: "secret:env/AWS_ACCESS_KEY_ID", ` +
			`secretAccessKeyRef: "secret:env/AWS_SECRET_ACCESS_KEY", sessionTokenRef: "secret:file/sms-token"}`),
	}))
	a := rt.Providers["sms"].HTTP.Authentication
	if a.Kind != AuthAWSSigV4 || a.Service != "sns" || a.Region != "eu-west-1" || string(a.AccessKeyID.Value()) != "AKIDEXAMPLE" ||
		string(a.SecretAccessKey.Value()) != "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" || string(a.SessionToken.Value()) != smsTokenValue {
		t.Fatalf("Authentication = %+v", a)
	}
	noToken := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(
		`    authentication: {kind: aws-sigv4, service: ses, region: us-east-1, accessKeyIdRef: "secret:file/sms-token", secretAccessKeyRef: "secret:file/sms-callback"}`)}))
	if !noToken.Providers["sms"].HTTP.Authentication.SessionToken.IsZero() {
		t.Error("a session token without sessionTokenRef")
	}
}

func TestLoadRefusesBadAWSSigV4(t *testing.T) {
	t.Parallel()
	const refs = `accessKeyIdRef: "secret:file/sms-token", secretAccessKeyRef: "secret:file/sms-callback"`
	tests := []struct{ name, auth, member, contains string }{
		{"no service", `{kind: aws-sigv4, region: us-east-1, ` + refs + `}`, "providers.sms.authentication.service", "required"},
		{"no region", `{kind: aws-sigv4, service: sns, ` + refs + `}`, "providers.sms.authentication.region", "required"},
		{"upper-case region", `{kind: aws-sigv4, service: sns, region: US-EAST-1, ` + refs + `}`, "providers.sms.authentication.region", "lower-case"},
		{"no secret key", `{kind: aws-sigv4, service: sns, region: us-east-1, accessKeyIdRef: "secret:file/sms-token"}`,
			"providers.sms.authentication.secretAccessKeyRef", "required"},
		{"a member of another kind", `{kind: aws-sigv4, service: sns, region: us-east-1, tokenRef: "secret:file/sms-token", ` + refs + `}`,
			"providers.sms.authentication.tokenRef", "unknown key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.load(t, doc(map[string]string{"providers": withHTTP("    authentication: " + tc.auth)}))
			d := requireDiag(t, err, CodeInvalid, tc.member)
			if !strings.Contains(d.String(), tc.contains) {
				t.Errorf("diagnostic %q does not mention %q", d.String(), tc.contains)
			}
			if strings.Contains(err.Error(), smsCallbackValue) || strings.Contains(err.Error(), smsTokenValue) {
				t.Errorf("the diagnostic shows a secret: %v", err)
			}
		})
	}
}
