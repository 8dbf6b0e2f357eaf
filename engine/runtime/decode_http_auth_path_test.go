package runtime

import (
	"strings"
	"testing"
)

// TestLoadPathTokenAuthentication: a Telegram bot token (digits, a colon, letters, - and _) is a
// path segment as it is; the prefix is optional.
func TestLoadPathTokenAuthentication(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.secret(t, "bot-token", "123456789:AAE-x_yZ0123456789abcdefghijklmnopq", 0o600)
	rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(
		`    authentication: {kind: path-token, prefix: bot, tokenRef: "secret:file/bot-token"}`)}))
	a := rt.Providers["sms"].HTTP.Authentication
	if a.Kind != AuthPathToken || a.Prefix != "bot" || string(a.Token.Value()) != "123456789:AAE-x_yZ0123456789abcdefghijklmnopq" {
		t.Fatalf("Authentication = %+v", a)
	}
	bare := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(
		`    authentication: {kind: path-token, tokenRef: "secret:file/sms-token"}`)}))
	if a := bare.Providers["sms"].HTTP.Authentication; a.Prefix != "" || string(a.Token.Value()) != smsTokenValue {
		t.Fatalf("Authentication without prefix = %+v", a)
	}
}

// TestLoadRefusesBadPathToken: a token that a path segment would have to escape (a slash, a
// space, a percent sign) or that is too short, and a prefix that is not unreserved characters,
// are refused without showing the token.
func TestLoadRefusesBadPathToken(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, token, auth, member string }{
		{"slash", "abc/def-ghij-klmn", `{kind: path-token, tokenRef: "secret:file/t"}`, "providers.sms.authentication.tokenRef"},
		{"percent", "abc%2Fdef-ghijkl", `{kind: path-token, tokenRef: "secret:file/t"}`, "providers.sms.authentication.tokenRef"},
		{"short", "abc", `{kind: path-token, tokenRef: "secret:file/t"}`, "providers.sms.authentication.tokenRef"},
		{"prefix", "abcdefgh-ijklmnop", `{kind: path-token, prefix: "a/b", tokenRef: "secret:file/t"}`, "providers.sms.authentication.prefix"},
		{"no token", "abcdefgh-ijklmnop", `{kind: path-token, prefix: bot}`, "providers.sms.authentication.tokenRef"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.secret(t, "t", tc.token, 0o600)
			_, err := b.load(t, doc(map[string]string{"providers": withHTTP("    authentication: " + tc.auth)}))
			requireDiag(t, err, CodeInvalid, tc.member)
			if tc.name != "short" && strings.Contains(err.Error(), tc.token) {
				t.Errorf("the diagnostic shows the token: %v", err)
			}
		})
	}
}
