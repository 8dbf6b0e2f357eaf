package httpgw

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"switchboard/engine"
	"switchboard/engine/pubkey"
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
// the base64 of one (how SendGrid shows its verification key), or as a PEM PUBLIC KEY block.
func ParseP256PublicKey(b []byte) (*ecdsa.PublicKey, error) { return pubkey.P256(b) }
