package smtp_test

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emersion/go-msgauth/dkim"

	smtp "switchboard/providers/smtp"
	"switchboard/providers/smtp/dkimkey"
)

// dkimIdentity writes a key with dkimkey.Keygen (as `switchboard dkim keygen` does) and
// returns the provider's DKIM config and the record a verifier finds in DNS.
func dkimIdentity(t testing.TB, alg dkimkey.Algorithm) (*smtp.DKIMConfig, dkimkey.Record) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "dkim.pem")
	rec, err := dkimkey.Keygen(path, "example.org", "s1", alg)
	if err != nil {
		t.Fatal(err)
	}
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return &smtp.DKIMConfig{Domain: "example.org", Selector: "s1", PrivateKeyPEM: pemBytes}, rec
}

// verify checks raw's signatures against rec and returns the single verification.
func verify(t *testing.T, raw []byte, rec dkimkey.Record) *dkim.Verification {
	t.Helper()
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: rec.Lookup()})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if len(vs) != 1 {
		t.Fatalf("%d signatures, want 1", len(vs))
	}
	return vs[0]
}

func TestDKIMSignatureVerifies(t *testing.T) {
	t.Parallel()
	for _, alg := range []dkimkey.Algorithm{dkimkey.RSA, dkimkey.Ed25519} {
		t.Run(string(alg), func(t *testing.T) {
			t.Parallel()
			d, rec := dkimIdentity(t, alg)
			out := email("0190f5a0-0000-7000-8000-0000000000c1")
			out.Parts["subject"] = "Résumé of your appointment"
			out.Parts["html"] = "<p>À lundi</p>"
			o, m := sendOne(t, smtp.Config{DKIM: d}, out)

			v := verify(t, m.raw, rec)
			if v.Err != nil {
				t.Fatalf("signature does not verify: %v", v.Err)
			}
			if v.Domain != "example.org" {
				t.Fatalf("d=%q", v.Domain)
			}
			signed := strings.ToLower(strings.Join(v.HeaderKeys, ":"))
			for _, h := range []string{"from", "to", "subject", "date", "message-id"} {
				if !strings.Contains(":"+signed+":", ":"+h+":") {
					t.Fatalf("h=%s does not cover %s", signed, h)
				}
			}
			sig := string(m.raw[:bytes.Index(m.raw, []byte("\r\n\r\n"))])
			if !strings.Contains(sig, "c=relaxed/relaxed") || !strings.Contains(sig, "a="+string(alg)+"-sha256") {
				t.Fatalf("signature is not relaxed/relaxed %s-sha256:\n%s", alg, sig)
			}
			if !strings.HasSuffix(o.ProviderReference, "@example.org>") {
				t.Fatalf("provider reference %q: want the DKIM domain", o.ProviderReference)
			}

			for name, tamper := range map[string]func(string) string{
				"body":    func(s string) string { return strings.Replace(s, "see you on Monday", "see you on Sunday", 1) },
				"subject": func(s string) string { return strings.Replace(s, "Subject: ", "Subject: Re: ", 1) },
			} {
				if v := verify(t, []byte(tamper(string(m.raw))), rec); v.Err == nil {
					t.Fatalf("a message with a changed %s still verifies", name)
				}
			}
		})
	}
}

func TestDKIMAcceptsPKCS1RSAKey(t *testing.T) {
	t.Parallel()
	d, rec := dkimIdentity(t, dkimkey.RSA)
	key, err := dkimkey.ParsePrivateKey(d.PrivateKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	d.PrivateKeyPEM = pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key.(*rsa.PrivateKey))})
	_, m := sendOne(t, smtp.Config{DKIM: d}, email("0190f5a0-0000-7000-8000-0000000000c2"))
	if v := verify(t, m.raw, rec); v.Err != nil {
		t.Fatalf("signature with a PKCS #1 key does not verify: %v", v.Err)
	}
}

func TestNewRefusesBadDKIM(t *testing.T) {
	t.Parallel()
	good, _ := dkimIdentity(t, dkimkey.Ed25519)
	for name, d := range map[string]*smtp.DKIMConfig{
		"key not PEM":      {Domain: "example.org", Selector: "s1", PrivateKeyPEM: []byte("not a key")},
		"domain malformed": {Domain: "exa mple.org", Selector: "s1", PrivateKeyPEM: good.PrivateKeyPEM},
		"selector empty":   {Domain: "example.org", PrivateKeyPEM: good.PrivateKeyPEM},
	} {
		_, err := smtp.New(smtp.Config{Host: "127.0.0.1", Port: 2525, TLS: smtp.TLSNone, DKIM: d})
		if err == nil {
			t.Errorf("%s: New accepted it", name)
		} else if strings.Contains(err.Error(), "not a key") {
			t.Errorf("%s: the error quotes the key: %v", name, err)
		}
	}
}

func TestUnsignedWithoutDKIM(t *testing.T) {
	t.Parallel()
	_, m := sendOne(t, smtp.Config{}, email("0190f5a0-0000-7000-8000-0000000000c3"))
	if bytes.Contains(m.raw, []byte("DKIM-Signature")) {
		t.Fatalf("a provider without DKIM signed the message")
	}
}
