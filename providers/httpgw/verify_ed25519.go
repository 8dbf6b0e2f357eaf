package httpgw

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"

	"switchboard/engine"
	"switchboard/engine/pubkey"
)

// Default headers of the ed25519 verifier: Telnyx's.
const (
	Ed25519SignatureHeader = "telnyx-signature-ed25519"
	Ed25519TimestampHeader = "telnyx-timestamp"
)

// ed25519ReplayCapacity bounds the remembered callbacks of one provider.
const ed25519ReplayCapacity = 1 << 16

// ed25519Verifier checks an Ed25519 signature (base64, in the signature header) of the
// timestamp header's text, a "|" and the raw body, as Telnyx signs its webhooks (API v2). The
// public key is pinned in the configuration, never taken from the request. The timestamp must
// lie within WebhookTolerance of the clock either way, and a verified (timestamp, body) pair
// is refused again until it leaves that window (a replay); a gateway's retry is signed afresh.
type ed25519Verifier struct {
	key                 ed25519.PublicKey
	sigHeader, tsHeader string
	clock               engine.Clock
	seen                *replayCache
}

func newEd25519Verifier(cfg VerifierConfig, clock engine.Clock) (Verifier, error) {
	key, err := ParseEd25519PublicKey(cfg.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("public key: %w", err)
	}
	v := &ed25519Verifier{key: key, sigHeader: cfg.SignatureHeader, tsHeader: cfg.TimestampHeader, clock: clock,
		seen: newReplayCache(ed25519ReplayCapacity)}
	if v.sigHeader == "" {
		v.sigHeader = Ed25519SignatureHeader
	}
	if v.tsHeader == "" {
		v.tsHeader = Ed25519TimestampHeader
	}
	return v, nil
}

// Verify checks the timestamp window, the signature, then the replay memory.
func (v *ed25519Verifier) Verify(r *http.Request, _ string, body []byte) error {
	sigText, err := singleHeader(r, v.sigHeader)
	if err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(strings.TrimSpace(sigText))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return fmt.Errorf("%w: %s is not the base64 of an Ed25519 signature", errUnverified, v.sigHeader)
	}
	tsText, err := singleHeader(r, v.tsHeader)
	if err != nil {
		return err
	}
	sent, now, err := checkWindow(v.clock, v.tsHeader, tsText)
	if err != nil {
		return err
	}
	msg := make([]byte, 0, len(tsText)+1+len(body))
	msg = append(append(append(msg, tsText...), '|'), body...)
	if !ed25519.Verify(v.key, msg, sig) {
		return fmt.Errorf("%w: signature mismatch", errUnverified)
	}
	sum := sha256.Sum256(body)
	if !v.seen.add(tsText+":"+hex.EncodeToString(sum[:]), sent.Add(WebhookTolerance), now) {
		return fmt.Errorf("%w: timestamp and body already seen, or replay memory full", errUnverified)
	}
	return nil
}

// ParseEd25519PublicKey reads an Ed25519 public key given as its 32 raw bytes, their base64
// (how Telnyx shows it), a DER SubjectPublicKeyInfo, its base64, or a PEM PUBLIC KEY block.
func ParseEd25519PublicKey(b []byte) (ed25519.PublicKey, error) { return pubkey.Ed25519(b) }
