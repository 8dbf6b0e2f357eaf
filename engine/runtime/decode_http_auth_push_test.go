package runtime

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"strings"
	"testing"
)

// pushSecrets writes an APNs .p8 key (apns.p8), a service account key (fcm.json) and, under
// the names given, variants of the service account key with members replaced.
func pushSecrets(t *testing.T, b *bundle, variants map[string]map[string]string) {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	b.secret(t, "apns.p8", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})), 0o600)
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err = x509.MarshalPKCS8PrivateKey(rk)
	if err != nil {
		t.Fatal(err)
	}
	key := func(changes map[string]string) string {
		m := map[string]string{"type": "service_account", "client_email": "push@p.iam.gserviceaccount.com",
			"private_key": string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
			"token_uri":   "https://oauth2.googleapis.com/token"}
		for k, v := range changes {
			m[k] = v
		}
		out, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	b.secret(t, "fcm.json", key(nil), 0o600)
	for name, changes := range variants {
		b.secret(t, name, key(changes), 0o600)
	}
}

func TestLoadPushAuthenticationKinds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pushSecrets(t, b, nil)
	rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(
		`    authentication: {kind: google-service-account, serviceAccountRef: "secret:file/fcm.json"}`)}))
	a := rt.Providers["sms"].HTTP.Authentication
	if a.Kind != AuthGoogleServiceAccount || !strings.Contains(string(a.ServiceAccount.Value()), "service_account") ||
		len(a.Scopes) != 1 || a.Scopes[0] != FirebaseMessagingScope {
		t.Fatalf("google-service-account = %+v", a)
	}
	rt = b.mustLoad(t, doc(map[string]string{"providers": withHTTP(
		`    authentication: {kind: apns-token, keyRef: "secret:file/apns.p8", keyId: KEY0123456, teamId: TEAM012345}`,
		`    http2: true`)}))
	h := rt.Providers["sms"].HTTP
	if a := h.Authentication; a.Kind != AuthAPNsToken || a.KeyID != "KEY0123456" || a.TeamID != "TEAM012345" || a.Key.IsZero() || !h.HTTP2 {
		t.Fatalf("apns-token = %+v, http2 %t", a, h.HTTP2)
	}
}

func TestLoadRefusesBadPushAuthentication(t *testing.T) {
	t.Parallel()
	const apns = `{kind: apns-token, keyRef: "secret:file/apns.p8", keyId: KEY0123456, teamId: TEAM012345`
	tests := []struct{ name, auth, member, contains string }{
		{"a service account that is not JSON", `{kind: google-service-account, serviceAccountRef: "secret:file/apns.p8"}`,
			"providers.sms.authentication.serviceAccountRef", "service account's JSON key"},
		{"another type of key", `{kind: google-service-account, serviceAccountRef: "secret:file/user.json"}`,
			"providers.sms.authentication.serviceAccountRef", "type service_account"},
		{"no RSA key", `{kind: google-service-account, serviceAccountRef: "secret:file/nokey.json"}`,
			"providers.sms.authentication.serviceAccountRef", "not an RSA private key"},
		{"a token_uri over plain http", `{kind: google-service-account, serviceAccountRef: "secret:file/plain.json"}`,
			"providers.sms.authentication.serviceAccountRef", "token_uri must be https"},
		{"no service account", `{kind: google-service-account}`, "providers.sms.authentication.serviceAccountRef", "required"},
		{"an APNs key that is not one", `{kind: apns-token, keyRef: "secret:file/fcm.json", keyId: KEY0123456, teamId: TEAM012345}`,
			"providers.sms.authentication.keyRef", "not an APNs signing key"},
		{"a short key id", apns[:len(apns)-len("keyId: KEY0123456, teamId: TEAM012345")] + `keyId: KEY1, teamId: TEAM012345}`,
			"providers.sms.authentication.keyId", "ten upper-case letters and digits"},
		{"no team id", `{kind: apns-token, keyRef: "secret:file/apns.p8", keyId: KEY0123456}`, "providers.sms.authentication.teamId", "required"},
		{"a member of another kind", apns + `, tokenRef: "secret:file/sms-token"}`, "providers.sms.authentication.tokenRef", "unknown key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			pushSecrets(t, b, map[string]map[string]string{
				"user.json":  {"type": "authorized_user"},
				"nokey.json": {"private_key": "none"},
				"plain.json": {"token_uri": "http://oauth2.example/token"},
			})
			_, err := b.load(t, doc(map[string]string{"providers": withHTTP("    authentication: " + tc.auth)}))
			d := requireDiag(t, err, CodeInvalid, tc.member)
			if !strings.Contains(d.String(), tc.contains) {
				t.Errorf("diagnostic %q does not mention %q", d.String(), tc.contains)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), "gserviceaccount") {
				t.Errorf("the diagnostic shows a key: %v", err)
			}
		})
	}
}
