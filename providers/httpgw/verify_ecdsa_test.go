package httpgw

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// sendgridKey is a fresh P-256 key and its public half in the three accepted forms.
type sendgridKey struct {
	priv             *ecdsa.PrivateKey
	der, b64, pemTxt []byte
}

func newSendgridKey(t *testing.T, curve elliptic.Curve) sendgridKey {
	t.Helper()
	priv, err := ecdsa.GenerateKey(curve, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&priv.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return sendgridKey{priv: priv, der: der, b64: []byte(base64.StdEncoding.EncodeToString(der)),
		pemTxt: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})}
}

// sign returns the base64 DER signature SendGrid would send for ts and body.
func (k sendgridKey) sign(t *testing.T, ts string, body []byte) string {
	t.Helper()
	sum := sha256.Sum256(append([]byte(ts), body...))
	sig, err := ecdsa.SignASN1(rand.Reader, k.priv, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(sig)
}

func eventRequest(sig, ts string, body []byte) *http.Request {
	return callbackRequest("/cb", "application/json", body, ECDSASignatureHeader, sig, ECDSATimestampHeader, ts)
}

func TestECDSAVerifierAcceptsEveryKeyForm(t *testing.T) {
	t.Parallel()
	key := newSendgridKey(t, elliptic.P256())
	clock := newFakeClock()
	ts := strconv.FormatInt(clock.Now().Unix(), 10)
	body := []byte(`[{"email":"a@example.org","event":"delivered","sg_message_id":"14c5d75ce93.dfd.64b469.filter0001.16648.5515E0B88.0"}]`)
	for name, pub := range map[string][]byte{"DER": key.der, "base64": key.b64, "PEM": key.pemTxt, "base64 with a newline": append(key.b64, '\n')} {
		v := mustVerifier(t, &VerifierConfig{Kind: VerifierECDSAP256, PublicKey: pub}, clock)
		if err := v.Verify(eventRequest(key.sign(t, ts, body), ts, body), "", body); err != nil {
			t.Errorf("%s key: %v", name, err)
		}
	}
}

func TestECDSAVerifierRefusals(t *testing.T) {
	t.Parallel()
	key := newSendgridKey(t, elliptic.P256())
	other := newSendgridKey(t, elliptic.P256())
	base := newFakeClock().Now()
	ts := strconv.FormatInt(base.Unix(), 10)
	body := []byte(`[{"event":"delivered","sg_message_id":"abc.filter0001"}]`)
	sig := key.sign(t, ts, body)
	cases := []struct {
		name string
		r    *http.Request
		body []byte
		now  time.Time
	}{
		{"tampered body", eventRequest(sig, ts, []byte(`[{"event":"bounce","sg_message_id":"abc.filter0001"}]`)), nil, base},
		{"another timestamp", eventRequest(sig, strconv.FormatInt(base.Unix()+1, 10), body), body, base},
		{"another key", eventRequest(other.sign(t, ts, body), ts, body), body, base},
		{"stale", eventRequest(sig, ts, body), body, base.Add(5*time.Minute + time.Second)},
		{"from the future", eventRequest(sig, ts, body), body, base.Add(-5*time.Minute - time.Second)},
		{"signature not base64", eventRequest("***", ts, body), body, base},
		{"no signature", callbackRequest("/cb", "application/json", body, ECDSATimestampHeader, ts), body, base},
		{"no timestamp", callbackRequest("/cb", "application/json", body, ECDSASignatureHeader, sig), body, base},
		{"timestamp in milliseconds", eventRequest(key.sign(t, ts+"000", body), ts+"000", body), body, base},
	}
	for _, tc := range cases {
		clock := newFakeClock()
		clock.now = tc.now
		v := mustVerifier(t, &VerifierConfig{Kind: VerifierECDSAP256, PublicKey: key.b64}, clock)
		b := tc.body
		if b == nil {
			b = []byte(`[{"event":"bounce","sg_message_id":"abc.filter0001"}]`)
		}
		if err := v.Verify(tc.r, "", b); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}

func TestECDSAVerifierRefusesReplaysEvenWithAMalleatedSignature(t *testing.T) {
	t.Parallel()
	key := newSendgridKey(t, elliptic.P256())
	clock := newFakeClock()
	v := mustVerifier(t, &VerifierConfig{Kind: VerifierECDSAP256, PublicKey: key.der}, clock)
	ts := strconv.FormatInt(clock.Now().Unix(), 10)
	body := []byte(`[{"event":"delivered","sg_message_id":"abc.filter0001"}]`)
	sig := key.sign(t, ts, body)
	if err := v.Verify(eventRequest(sig, ts, body), "", body); err != nil {
		t.Fatalf("first delivery refused: %v", err)
	}
	clock.Advance(time.Second)
	if v.Verify(eventRequest(sig, ts, body), "", body) == nil {
		t.Fatal("replay accepted")
	}
	// (r, n-s) verifies as well as (r, s): the replay key must not be the signature.
	raw, _ := base64.StdEncoding.DecodeString(sig)
	var rs struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(raw, &rs); err != nil {
		t.Fatal(err)
	}
	rs.S = new(big.Int).Sub(elliptic.P256().Params().N, rs.S)
	malleated, err := asn1.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	mSig := base64.StdEncoding.EncodeToString(malleated)
	sum := sha256.Sum256(append([]byte(ts), body...))
	if !ecdsa.VerifyASN1(&key.priv.PublicKey, sum[:], malleated) {
		t.Fatal("test premise: the malleated signature does not verify")
	}
	if v.Verify(eventRequest(mSig, ts, body), "", body) == nil {
		t.Fatal("replay with a malleated signature accepted")
	}
	fresh := strconv.FormatInt(clock.Now().Unix(), 10)
	if err := v.Verify(eventRequest(key.sign(t, fresh, body), fresh, body), "", body); err != nil {
		t.Fatalf("a fresh delivery of the same events refused: %v", err)
	}
}

func TestParseP256PublicKeyRefusesOtherKeys(t *testing.T) {
	t.Parallel()
	p384 := newSendgridKey(t, elliptic.P384())
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	rsaDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"empty":       nil,
		"P-384":       p384.b64,
		"RSA":         rsaDER,
		"garbage":     []byte("not a key at all"),
		"private PEM": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: p384.der}),
	} {
		if _, err := ParseP256PublicKey(b); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := NewVerifier(&VerifierConfig{Kind: VerifierECDSAP256, PublicKey: b}, nil); err == nil {
			t.Errorf("%s: NewVerifier accepted", name)
		}
	}
}

// TestParseP256PublicKeyKeepsDERWhiteSpaceBytes: a DER key whose last byte is a white-space value
// (about one key in forty) parses whole.
func TestParseP256PublicKeyKeepsDERWhiteSpaceBytes(t *testing.T) {
	t.Parallel()
	for i := 0; ; i++ {
		key := newSendgridKey(t, elliptic.P256())
		if last := key.der[len(key.der)-1]; last != ' ' && last != '\n' && last != '\t' && last != '\r' && last != '\v' && last != '\f' {
			if i < 2000 {
				continue
			}
			t.Skip("no key ending in a white-space byte in 2000 tries")
		}
		if _, err := ParseP256PublicKey(key.der); err != nil {
			t.Fatalf("DER key ending in %#x: %v", key.der[len(key.der)-1], err)
		}
		return
	}
}
