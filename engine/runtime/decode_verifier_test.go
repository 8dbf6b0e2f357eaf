package runtime

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
)

// publicKeyDER returns the DER SubjectPublicKeyInfo of a fresh key on curve (nil: RSA).
func publicKeyDER(t *testing.T, curve elliptic.Curve) []byte {
	t.Helper()
	var pub any
	if curve == nil {
		k, err := rsa.GenerateKey(rand.Reader, 1024)
		if err != nil {
			t.Fatal(err)
		}
		pub = &k.PublicKey
	} else {
		k, err := ecdsa.GenerateKey(curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		pub = &k.PublicKey
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func TestLoadVonageSignatureVerifier(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(
		`    callbackVerifier: {kind: vonage-signature, signatureMethod: SHA256, secretRef: "secret:file/sms-callback"}`)}))
	v := rt.Providers["sms"].HTTP.CallbackVerifier
	if v.Kind != VerifierVonageSignature || v.SignatureMethod != "sha256" || string(v.Key()) != smsCallbackValue {
		t.Fatalf("Verifier = %+v (key %q)", v, v.Key())
	}
}

func TestLoadECDSAP256Verifier(t *testing.T) {
	t.Parallel()
	der := publicKeyDER(t, elliptic.P256())
	b64 := base64.StdEncoding.EncodeToString(der)
	pemText := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	forms := map[string]string{
		"base64":                      `    callbackVerifier: {kind: ecdsa-p256, publicKey: "` + b64 + `"}`,
		"base64 from the environment": `    callbackVerifier: {kind: ecdsa-p256, publicKey: "${SENDGRID_KEY}"}`,
		"PEM block": "    callbackVerifier:\n      kind: ecdsa-p256\n      publicKey: |\n        " +
			strings.ReplaceAll(strings.TrimSpace(pemText), "\n", "\n        "),
	}
	for name, line := range forms {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.env["SENDGRID_KEY"] = b64
			rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(line)}))
			v := rt.Providers["sms"].HTTP.CallbackVerifier
			if v.Kind != VerifierECDSAP256 || !bytes.Equal(v.PublicKey, der) || v.Key() != nil {
				t.Fatalf("Verifier = %+v", v)
			}
		})
	}
}

func TestLoadRefusesBadNewVerifiers(t *testing.T) {
	t.Parallel()
	p384 := base64.StdEncoding.EncodeToString(publicKeyDER(t, elliptic.P384()))
	rsaKey := base64.StdEncoding.EncodeToString(publicKeyDER(t, nil))
	certPEM := "-----BEGIN CERTIFICATE-----\\nMAA=\\n-----END CERTIFICATE-----\\n"
	tests := []struct {
		name, verifier, member, contains string
	}{
		{"vonage without signature method", `{kind: vonage-signature, secretRef: "secret:file/sms-callback"}`,
			"providers.sms.callbackVerifier.signatureMethod", "required"},
		{"vonage with an unknown signature method", `{kind: vonage-signature, signatureMethod: sha384, secretRef: "secret:file/sms-callback"}`,
			"providers.sms.callbackVerifier.signatureMethod", "md5hash, md5, sha1, sha256, sha512"},
		{"vonage without secret", `{kind: vonage-signature, signatureMethod: md5hash}`,
			"providers.sms.callbackVerifier.secretRef", "required"},
		{"vonage with a member of another kind", `{kind: vonage-signature, signatureMethod: md5hash, secretRef: "secret:file/sms-callback", url: "https://a.example/"}`,
			"providers.sms.callbackVerifier.url", "unknown key"},
		{"ecdsa without key", `{kind: ecdsa-p256}`, "providers.sms.callbackVerifier.publicKey", "required"},
		{"ecdsa with a P-384 key", `{kind: ecdsa-p256, publicKey: "` + p384 + `"}`, "providers.sms.callbackVerifier.publicKey", "P-256"},
		{"ecdsa with an RSA key", `{kind: ecdsa-p256, publicKey: "` + rsaKey + `"}`, "providers.sms.callbackVerifier.publicKey", "P-256"},
		{"ecdsa with text that is not base64", `{kind: ecdsa-p256, publicKey: "not a key"}`, "providers.sms.callbackVerifier.publicKey", "P-256"},
		{"ecdsa with a certificate", `{kind: ecdsa-p256, publicKey: "` + certPEM + `"}`, "providers.sms.callbackVerifier.publicKey", "PUBLIC KEY"},
		{"ecdsa with a secret reference", `{kind: ecdsa-p256, publicKey: "` + p384 + `", secretRef: "secret:file/sms-callback"}`,
			"providers.sms.callbackVerifier.secretRef", "unknown key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.load(t, doc(map[string]string{"providers": withHTTP("    callbackVerifier: " + tc.verifier)}))
			d := requireDiag(t, err, CodeInvalid, tc.member)
			if !strings.Contains(d.String(), tc.contains) {
				t.Errorf("diagnostic %q does not mention %q", d.String(), tc.contains)
			}
			if strings.Contains(err.Error(), smsCallbackValue) {
				t.Errorf("diagnostic shows the secret: %v", err)
			}
		})
	}
}
