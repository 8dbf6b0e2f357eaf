package pushkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"testing"
)

func pkcs8(t *testing.T, key any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func TestParseAPNsKeyTakesP256Only(t *testing.T) {
	t.Parallel()
	p256, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	if k, err := ParseAPNsKey([]byte(pkcs8(t, p256))); err != nil || !k.Equal(p256) {
		t.Fatalf("a P-256 .p8: %v", err)
	}
	for name, data := range map[string]string{"P-384": pkcs8(t, p384), "RSA": pkcs8(t, rk), "not PEM": "MIGTAgEAMBMG", "empty": ""} {
		if _, err := ParseAPNsKey([]byte(data)); !errors.Is(err, ErrNotAPNsKey) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestCheckServiceAccount(t *testing.T) {
	t.Parallel()
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	key := func(changes map[string]string) []byte {
		m := map[string]string{"type": "service_account", "client_email": "a@p.iam.gserviceaccount.com",
			"private_key": pkcs8(t, rk), "token_uri": "https://oauth2.googleapis.com/token"}
		for k, v := range changes {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		return b
	}
	if sa, err := CheckServiceAccount(key(nil)); err != nil || sa.TokenURI != "https://oauth2.googleapis.com/token" {
		t.Fatalf("a good key: %+v, %v", sa, err)
	}
	for name, tc := range map[string]struct {
		data []byte
		want error
	}{
		"not JSON":          {[]byte("-----BEGIN"), ErrNotServiceAccount},
		"a user credential": {key(map[string]string{"type": "authorized_user"}), ErrNotServiceAccount},
		"no client email":   {key(map[string]string{"client_email": ""}), ErrNoClientEmail},
		"an EC key":         {key(map[string]string{"private_key": pkcs8(t, ec)}), ErrNotRSAKey},
		"no key":            {key(map[string]string{"private_key": ""}), ErrNotRSAKey},
	} {
		if _, err := CheckServiceAccount(tc.data); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", name, err, tc.want)
		}
	}
}
