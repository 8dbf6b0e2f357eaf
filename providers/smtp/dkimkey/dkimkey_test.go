//go:debug rsa1024min=0

package dkimkey_test

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"

	"switchboard/providers/smtp/dkimkey"
)

func TestKeygenWritesKeyAndRecordThatVerify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		alg  dkimkey.Algorithm
		want string // k= tag
	}{{dkimkey.RSA, "rsa"}, {dkimkey.Ed25519, "ed25519"}, {"", "rsa"}} {
		t.Run("alg="+string(tc.alg), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "dkim.pem")
			rec, err := dkimkey.Keygen(path, "example.org", "s1", tc.alg)
			if err != nil {
				t.Fatalf("Keygen: %v", err)
			}
			if rec.Name != "s1._domainkey.example.org" {
				t.Fatalf("record name %q", rec.Name)
			}
			if !strings.HasPrefix(rec.Value, "v=DKIM1; k="+tc.want+"; p=") {
				t.Fatalf("record value %q", rec.Value)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if perm := info.Mode().Perm(); perm != 0o600 {
				t.Fatalf("key file mode %o, want 600", perm)
			}
			pemBytes, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if block, _ := pem.Decode(pemBytes); block == nil || block.Type != "PRIVATE KEY" {
				t.Fatalf("key file is not a PEM PKCS #8 block")
			}
			key, err := dkimkey.ParsePrivateKey(pemBytes)
			if err != nil {
				t.Fatalf("ParsePrivateKey of the written file: %v", err)
			}
			if k, ok := key.(*rsa.PrivateKey); ok && k.N.BitLen() != dkimkey.RSABits {
				t.Fatalf("RSA key has %d bits", k.N.BitLen())
			}
			signAndVerify(t, key, rec)
		})
	}
}

// signAndVerify proves the record publishes the key: a message signed with key verifies
// against rec through go-msgauth, and fails once its body is altered.
func signAndVerify(t *testing.T, key crypto.Signer, rec dkimkey.Record) {
	t.Helper()
	msg := "From: a@example.org\r\nTo: b@example.net\r\nSubject: hi\r\n\r\nHello.\r\n"
	var signed bytes.Buffer
	err := dkim.Sign(&signed, strings.NewReader(msg), &dkim.SignOptions{
		Domain: "example.org", Selector: "s1", Signer: key,
		HeaderCanonicalization: dkim.CanonicalizationRelaxed, BodyCanonicalization: dkim.CanonicalizationRelaxed,
	})
	if err != nil {
		t.Fatalf("sign: %v", err)
	}
	opts := &dkim.VerifyOptions{LookupTXT: rec.Lookup()}
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(signed.Bytes()), opts)
	if err != nil || len(vs) != 1 || vs[0].Err != nil {
		t.Fatalf("verify: err %v, verifications %+v", err, vs)
	}
	altered := strings.Replace(signed.String(), "Hello.", "Hullo.", 1)
	vs, err = dkim.VerifyWithOptions(strings.NewReader(altered), opts)
	if err != nil || len(vs) != 1 || vs[0].Err == nil {
		t.Fatalf("an altered body still verifies: err %v, verifications %+v", err, vs)
	}
}

func TestLoadRecordRebuildsTheRecordOfAKeyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dkim.pem")
	if _, err := dkimkey.LoadRecord(path, "example.org", "dev"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("LoadRecord of a missing file: %v, want fs.ErrNotExist", err)
	}
	made, err := dkimkey.Keygen(path, "example.org", "dev", dkimkey.Ed25519)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := dkimkey.LoadRecord(path, "example.org", "dev")
	if err != nil {
		t.Fatal(err)
	}
	if loaded != made {
		t.Fatalf("LoadRecord = %+v, Keygen made %+v", loaded, made)
	}
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := dkimkey.LoadRecord(path, "example.org", "dev"); !errors.Is(err, dkimkey.ErrInvalidInput) {
		t.Fatalf("LoadRecord of a broken file: %v, want ErrInvalidInput", err)
	}
}

func TestKeygenRefusesAnExistingFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "dkim.pem")
	if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := dkimkey.Keygen(path, "example.org", "s1", dkimkey.Ed25519)
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Keygen over an existing file: %v, want fs.ErrExist", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Fatalf("existing file changed to %q", b)
	}
}

func TestKeygenRefusesInvalidInputBeforeWriting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, domain, selector, alg string }{
		{"unknown algorithm", "example.org", "s1", "dsa"},
		{"empty domain", "", "s1", "rsa"},
		{"domain with a space", "example .org", "s1", "rsa"},
		{"domain label starting with -", "-x.example.org", "s1", "rsa"},
		{"empty selector", "example.org", "", "ed25519"},
		{"selector with a slash", "example.org", "s/1", "ed25519"},
		{"label longer than 63", "example.org", strings.Repeat("a", 64), "ed25519"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "dkim.pem")
			_, err := dkimkey.Keygen(path, tc.domain, tc.selector, dkimkey.Algorithm(tc.alg))
			if !errors.Is(err, dkimkey.ErrInvalidInput) {
				t.Fatalf("err %v, want ErrInvalidInput", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused keygen left a file (stat: %v)", err)
			}
		})
	}
}

func TestParseAlgorithm(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]dkimkey.Algorithm{"": dkimkey.RSA, "rsa": dkimkey.RSA, "RSA": dkimkey.RSA, "ed25519": dkimkey.Ed25519} {
		if got, err := dkimkey.ParseAlgorithm(in); err != nil || got != want {
			t.Errorf("ParseAlgorithm(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := dkimkey.ParseAlgorithm("ecdsa"); !errors.Is(err, dkimkey.ErrInvalidInput) {
		t.Errorf("ParseAlgorithm(ecdsa): %v", err)
	}
}

func TestParsePrivateKey(t *testing.T) {
	t.Parallel()
	rsa2048, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	rsa512, err := rsa.GenerateKey(rand.Reader, 512)
	if err != nil {
		t.Fatal(err)
	}
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	_, ed, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPEM, err := dkimkey.MarshalPrivateKey(ed)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := func(k *rsa.PrivateKey) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
	}
	for _, tc := range []struct {
		name string
		pem  []byte
		ok   bool
	}{
		{"RSA PKCS #1", pkcs1(rsa2048), true},
		{"Ed25519 PKCS #8", edPEM, true},
		{"RSA below 1024 bits", pkcs1(rsa512), false},
		{"ECDSA", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}), false},
		{"certificate block", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte{1}}), false},
		{"not PEM", []byte("secret"), false},
		{"broken DER", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := dkimkey.ParsePrivateKey(tc.pem)
			if tc.ok && err != nil {
				t.Fatalf("refused: %v", err)
			}
			if !tc.ok && !errors.Is(err, dkimkey.ErrInvalidInput) {
				t.Fatalf("err %v, want ErrInvalidInput", err)
			}
		})
	}
}

func TestRecordStringsFitDNS(t *testing.T) {
	t.Parallel()
	key, err := dkimkey.Generate(dkimkey.RSA)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := dkimkey.NewRecord("example.org.", "s1", key.Public())
	if err != nil {
		t.Fatal(err)
	}
	if rec.Name != "s1._domainkey.example.org" {
		t.Fatalf("name %q", rec.Name)
	}
	parts := rec.Strings()
	if len(parts) < 2 {
		t.Fatalf("an RSA-2048 record in %d string(s); it cannot fit in one", len(parts))
	}
	var joined strings.Builder
	for _, p := range parts {
		if len(p) > 255+2 || p[0] != '"' || p[len(p)-1] != '"' {
			t.Fatalf("zone string %q is not a quoted string of at most 255 bytes", p)
		}
		joined.WriteString(p[1 : len(p)-1])
	}
	if joined.String() != rec.Value {
		t.Fatalf("strings do not join to the value")
	}
	if !strings.HasPrefix(rec.ZoneLine(), "s1._domainkey.example.org. 3600 IN TXT \"v=DKIM1; k=rsa; p=") {
		t.Fatalf("zone line %q", rec.ZoneLine())
	}
	if _, err := rec.Lookup()("other._domainkey.example.org"); err == nil {
		t.Fatalf("Lookup answered a name it does not hold")
	}
}
