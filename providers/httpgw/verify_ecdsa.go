package httpgw

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"switchboard/engine"
)

// Headers of the SendGrid Event Webhook signature, checked by the ecdsa-p256 verifier.
const (
	ECDSASignatureHeader = "X-Twilio-Email-Event-Webhook-Signature"
	ECDSATimestampHeader = "X-Twilio-Email-Event-Webhook-Timestamp"
)

// ecdsaReplayCapacity bounds the remembered callbacks of one provider.
const ecdsaReplayCapacity = 1 << 16

// ecdsaVerifier checks SendGrid's signed Event Webhook: ECDSA on P-256 with SHA-256 over the
// timestamp header's text immediately followed by the raw body; the signature header holds
// the base64 of the ASN.1 DER signature (SEQUENCE{r, s}). The public key is pinned in the
// configuration, never taken from the request.
//
// SendGrid documents no tolerance; the timestamp must lie within WebhookTolerance of the clock
// either way. A verified (timestamp, body) pair is refused again until it leaves that window.
// The pair, not the signature, is the replay key: an ECDSA signature is malleable ((r, s) and
// (r, n-s) both verify), so a replayed request could otherwise pass with a rewritten one.
type ecdsaVerifier struct {
	key   *ecdsa.PublicKey
	clock engine.Clock
	seen  *replayCache
}

func newECDSAVerifier(cfg VerifierConfig, clock engine.Clock) (Verifier, error) {
	key, err := ParseP256PublicKey(cfg.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	return &ecdsaVerifier{key: key, clock: clock, seen: newReplayCache(ecdsaReplayCapacity)}, nil
}

// Verify checks the timestamp window, the signature, then the replay memory.
func (v *ecdsaVerifier) Verify(r *http.Request, _ string, body []byte) error {
	sigText, err := singleHeader(r, ECDSASignatureHeader)
	if err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sigText))
	if err != nil || len(sig) > 128 {
		return fmt.Errorf("%w: %s is not base64 of a DER signature", errUnverified, ECDSASignatureHeader)
	}
	tsText, err := singleHeader(r, ECDSATimestampHeader)
	if err != nil {
		return err
	}
	ts, err := parseUnixSeconds(tsText)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errUnverified, ECDSATimestampHeader, err)
	}
	now, sent := v.clock.Now(), time.Unix(ts, 0)
	if now.Sub(sent) > WebhookTolerance || sent.Sub(now) > WebhookTolerance {
		return fmt.Errorf("%w: timestamp is outside the %s window", errUnverified, WebhookTolerance)
	}
	h := sha256.New()
	h.Write([]byte(tsText))
	h.Write(body)
	if !ecdsa.VerifyASN1(v.key, h.Sum(nil), sig) {
		return fmt.Errorf("%w: signature mismatch", errUnverified)
	}
	bodySum := sha256.Sum256(body)
	if !v.seen.add(tsText+":"+hex.EncodeToString(bodySum[:]), sent.Add(WebhookTolerance), now) {
		return fmt.Errorf("%w: timestamp and body already seen, or replay memory full", errUnverified)
	}
	return nil
}

// ParseP256PublicKey reads an ECDSA P-256 public key given as a DER SubjectPublicKeyInfo, as
// the base64 of one (how SendGrid shows its verification key), or as a PEM "PUBLIC KEY" block.
func ParseP256PublicKey(b []byte) (*ecdsa.PublicKey, error) {
	if len(b) > 0 && b[0] != 0x30 {
		// Text forms (base64, PEM) may carry surrounding white space; DER is binary, and its
		// last bytes may happen to be white-space values, so it is never trimmed.
		b = bytes.TrimSpace(b)
	}
	if len(b) == 0 {
		return nil, errors.New("empty")
	}
	der := b
	if block, _ := pem.Decode(b); block != nil {
		if block.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("PEM block %q is not a PUBLIC KEY", block.Type)
		}
		der = block.Bytes
	} else if b[0] != 0x30 {
		text := strings.Join(strings.Fields(string(b)), "")
		decoded, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			if decoded, err = base64.RawStdEncoding.DecodeString(text); err != nil {
				return nil, errors.New("neither DER, base64 of DER nor PEM")
			}
		}
		der = decoded
	}
	pub, err := x509.ParsePKIXPublicKey(der)
	if err != nil {
		return nil, fmt.Errorf("not a SubjectPublicKeyInfo: %w", err)
	}
	key, ok := pub.(*ecdsa.PublicKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, errors.New("not an ECDSA P-256 key")
	}
	return key, nil
}
