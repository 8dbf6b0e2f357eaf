package pubkey

import (
	"bytes"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"maps"
	"slices"
	"testing"
)

// FuzzRead feeds the readers any bytes: they never panic, and a key they take is a key of its
// kind that reads back the same from its DER, its base64 and its PEM.
//
//	go test -run '^$' -fuzz FuzzRead ./engine/pubkey/
func FuzzRead(f *testing.F) {
	ed, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	edDER, err := x509.MarshalPKIXPublicKey(ed)
	if err != nil {
		f.Fatal(err)
	}
	_, ecDER := newP256(f)
	for _, der := range [][]byte{edDER, ecDER} {
		for _, form := range derForms(der) {
			f.Add(form)
		}
	}
	f.Add([]byte(base64.StdEncoding.EncodeToString(ed)))
	f.Add([]byte{0x30})
	f.Add([]byte("0AAA"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if key, err := Ed25519(b); err == nil {
			if len(key) != ed25519.PublicKeySize {
				t.Fatalf("Ed25519(%q) took a key of %d bytes", b, len(key))
			}
			der, err := x509.MarshalPKIXPublicKey(key)
			if err != nil {
				t.Fatalf("Ed25519(%q) took a key that does not marshal: %v", b, err)
			}
			for _, form := range append(slices.Collect(maps.Values(derForms(der))), key, []byte(base64.StdEncoding.EncodeToString(key))) {
				if again, err := Ed25519(form); err != nil || !bytes.Equal(again, key) {
					t.Fatalf("Ed25519(%q) = %x, but its form %q reads as %x, %v", b, key, form, again, err)
				}
			}
		}
		if key, err := P256(b); err == nil {
			if key.Curve != elliptic.P256() {
				t.Fatalf("P256(%q) took a key on %v", b, key.Curve.Params().Name)
			}
			der, err := x509.MarshalPKIXPublicKey(key)
			if err != nil {
				t.Fatalf("P256(%q) took a key that does not marshal: %v", b, err)
			}
			for _, form := range derForms(der) {
				if again, err := P256(form); err != nil || !again.Equal(key) {
					t.Fatalf("P256(%q) took a key whose form %q reads as %v, %v", b, form, again, err)
				}
			}
		}
	})
}

// FuzzEd25519Base64 reads every 32-byte key back from its base64, padded or not, the form in
// which Telnyx shows it: whatever the text starts with.
func FuzzEd25519Base64(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0xd0}, ed25519.PublicKeySize))
	f.Add(make([]byte, ed25519.PublicKeySize))
	f.Fuzz(func(t *testing.T, seed []byte) {
		key := make([]byte, ed25519.PublicKeySize)
		copy(key, seed)
		for _, text := range []string{base64.StdEncoding.EncodeToString(key), base64.RawStdEncoding.EncodeToString(key)} {
			if got, err := Ed25519([]byte(text)); err != nil || !bytes.Equal(got, key) {
				t.Fatalf("Ed25519(%q) = %x, %v; want %x", text, got, err, key)
			}
		}
	})
}
