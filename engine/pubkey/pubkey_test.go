package pubkey

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"maps"
	"testing"
)

// TestEd25519ReadsEveryForm reads one Ed25519 key in each form a gateway shows it, with a key
// whose base64 starts with '0', the character that is also the first byte of DER.
func TestEd25519ReadsEveryForm(t *testing.T) {
	pub := make([]byte, ed25519.PublicKeySize)
	pub[0] = 0xd0 // base64 "0…"
	for i := 1; i < len(pub); i++ {
		pub[i] = byte(i)
	}
	text := base64.StdEncoding.EncodeToString(pub)
	if text[0] != '0' {
		t.Fatalf("the key's base64 %q does not start with '0'", text)
	}
	der, err := x509.MarshalPKIXPublicKey(ed25519.PublicKey(pub))
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string][]byte{
		"raw":              pub,
		"base64":           []byte(text),
		"base64 unpadded":  []byte(base64.RawStdEncoding.EncodeToString(pub)),
		"base64 with a LF": []byte(text + "\n"),
	}
	maps.Copy(forms, derForms(der))
	for name, b := range forms {
		got, err := Ed25519(b)
		if err != nil || !bytes.Equal(got, pub) {
			t.Errorf("%s: Ed25519 = %x, %v; want %x", name, got, err, pub)
		}
	}
	for name, b := range map[string][]byte{"empty": nil, "not base64": []byte("0 not a key"), "short": []byte("0AAA")} {
		if _, err := Ed25519(b); err == nil {
			t.Errorf("%s: Ed25519 took it", name)
		}
	}
}

// TestP256ReadsEveryForm reads one ECDSA P-256 key as DER, its base64 and PEM.
func TestP256ReadsEveryForm(t *testing.T) {
	pub, der := newP256(t)
	for name, b := range derForms(der) {
		got, err := P256(b)
		if err != nil || !got.Equal(pub) {
			t.Errorf("%s: P256 = %v, %v", name, got, err)
		}
	}
}

// newP256 generates a P-256 key and returns its public half with its DER.
func newP256(tb testing.TB) (*ecdsa.PublicKey, []byte) {
	tb.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		tb.Fatal(err)
	}
	return &priv.PublicKey, der
}

// derForms are the ways a gateway shows a key whose DER is der, by name.
func derForms(der []byte) map[string][]byte {
	return map[string][]byte{
		"DER":                       der,
		"base64 of DER":             []byte(base64.StdEncoding.EncodeToString(der)),
		"unpadded base64 of DER+LF": []byte(base64.RawStdEncoding.EncodeToString(der) + "\n"),
		"PEM":                       pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
	}
}
