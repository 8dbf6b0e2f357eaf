package runtime

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
)

func TestLoadGatewayVerifiers(t *testing.T) {
	t.Parallel()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(pub)
	b := setup(t)
	b.secret(t, "telnyx.pub", base64.StdEncoding.EncodeToString(pub), 0o600)
	b.secret(t, "telnyx.pem", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})), 0o600)
	load := func(verifier string) *Verifier {
		t.Helper()
		rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP("    callbackVerifier: " + verifier)}))
		return rt.Providers["sms"].HTTP.CallbackVerifier
	}
	v := load(`{kind: ed25519, publicKeyRef: "secret:file/telnyx.pub"}`)
	if v.Kind != VerifierEd25519 || !bytes.Equal(v.PublicKey, pub) || v.SignatureHeader != "telnyx-signature-ed25519" || v.TimestampHeader != "telnyx-timestamp" {
		t.Errorf("ed25519 = %+v", v)
	}
	v = load(`{kind: ed25519, signatureHeader: X-Sig, timestampHeader: X-Ts, publicKeyRef: "secret:file/telnyx.pem"}`)
	if !bytes.Equal(v.PublicKey, pub) || v.SignatureHeader != "x-sig" || v.TimestampHeader != "x-ts" {
		t.Errorf("ed25519 with PEM and headers = %+v", v)
	}
	if v = load(`{kind: slack, secretRef: "secret:file/sms-callback"}`); v.Kind != VerifierSlack || string(v.Key()) != smsCallbackValue {
		t.Errorf("slack = %+v", v)
	}
	if v = load(`{kind: mailgun, secretRef: "secret:file/sms-callback"}`); v.Kind != VerifierMailgun || string(v.Key()) != smsCallbackValue {
		t.Errorf("mailgun = %+v", v)
	}
	v = load(`{kind: plivo-v3, url: "https://sb.example/v1/provider-callbacks/sms", secretRef: "secret:file/sms-callback"}`)
	if v.Kind != VerifierPlivoV3 || v.URL != "https://sb.example/v1/provider-callbacks/sms" || string(v.Key()) != smsCallbackValue {
		t.Errorf("plivo-v3 = %+v", v)
	}
	v = load(`{kind: basic, usernameRef: "secret:file/smtp-user", passwordRef: "secret:file/smtp-password"}`)
	if v.Kind != VerifierBasic || string(v.Username.Value()) != smtpUserValue || string(v.Password.Value()) != smtpPassValue {
		t.Errorf("basic = %+v", v)
	}
}

func TestLoadRefusesBadGatewayVerifiers(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, verifier, member, contains string }{
		{"ed25519 without a key", `{kind: ed25519}`, "providers.sms.callbackVerifier.publicKeyRef", "required"},
		{"ed25519 with a key that is not one", `{kind: ed25519, publicKeyRef: "secret:file/sms-callback"}`,
			"providers.sms.callbackVerifier.publicKeyRef", "Ed25519"},
		{"ed25519 with a bad header", `{kind: ed25519, signatureHeader: "a b", publicKeyRef: "secret:file/sms-callback"}`,
			"providers.sms.callbackVerifier.signatureHeader", "header"},
		{"slack without secret", `{kind: slack}`, "providers.sms.callbackVerifier.secretRef", "required"},
		{"slack with a url", `{kind: slack, secretRef: "secret:file/sms-callback", url: "https://a.example/"}`,
			"providers.sms.callbackVerifier.url", "unknown key"},
		{"mailgun without secret", `{kind: mailgun}`, "providers.sms.callbackVerifier.secretRef", "required"},
		{"plivo without url", `{kind: plivo-v3, secretRef: "secret:file/sms-callback"}`, "providers.sms.callbackVerifier.url", "required"},
		{"plivo with a relative url", `{kind: plivo-v3, url: "/cb", secretRef: "secret:file/sms-callback"}`,
			"providers.sms.callbackVerifier.url", "absolute"},
		{"basic without password", `{kind: basic, usernameRef: "secret:file/smtp-user"}`, "providers.sms.callbackVerifier.passwordRef", "required"},
		{"basic with a colon in the user name", `{kind: basic, usernameRef: "secret:file/colon", passwordRef: "secret:file/smtp-password"}`,
			"providers.sms.callbackVerifier.usernameRef", "colon"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.secret(t, "colon", "us:er", 0o600)
			_, err := b.load(t, doc(map[string]string{"providers": withHTTP("    callbackVerifier: " + tc.verifier)}))
			d := requireDiag(t, err, CodeInvalid, tc.member)
			if !strings.Contains(d.String(), tc.contains) {
				t.Errorf("diagnostic %q does not mention %q", d.String(), tc.contains)
			}
			if strings.Contains(err.Error(), smsCallbackValue) || strings.Contains(err.Error(), smtpPassValue) {
				t.Errorf("the diagnostic shows a secret: %v", err)
			}
		})
	}
}
