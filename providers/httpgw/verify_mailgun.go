package httpgw

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"switchboard/engine"
)

// mailgunReplayCapacity bounds the remembered tokens of one provider.
const mailgunReplayCapacity = 1 << 16

// mailgunVerifier checks Mailgun's signed webhooks: the signature is the hex HMAC-SHA256, keyed
// with the webhook signing key, of the timestamp text immediately followed by the token. The
// three travel in the JSON body's `signature` member ({timestamp, token, signature}; the
// timestamp as a string or a number), or, for legacy form-encoded webhooks, as top-level form
// fields of the same names.
//
// The signature covers the timestamp and the token only, not the event: that is Mailgun's
// scheme. What protects the event is TLS and the token memory below (a captured signature can
// be attached to another body only until the token is first seen).
//
// Mailgun recommends checking that the timestamp is recent and refusing a token seen before.
// The timestamp must lie within WebhookTolerance of the clock either way, and a verified token
// is remembered until its timestamp leaves that window: a second request with the same token is
// refused (a replay). The token is only remembered once the signature is verified, so nobody
// but the gateway can fill the memory.
type mailgunVerifier struct {
	key   []byte
	clock engine.Clock
	seen  *replayCache
}

func newMailgunVerifier(cfg VerifierConfig, clock engine.Clock) (Verifier, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("webhook signing key is empty")
	}
	return &mailgunVerifier{key: append([]byte(nil), cfg.Secret...), clock: clock, seen: newReplayCache(mailgunReplayCapacity)}, nil
}

// mailgunSignature is the body's signature member.
type mailgunSignature struct {
	Timestamp json.Number `json:"timestamp"`
	Token     string      `json:"token"`
	Signature string      `json:"signature"`
}

// Verify reads the signature member, checks the window and the signature, then the tokens seen.
func (v *mailgunVerifier) Verify(r *http.Request, _ string, body []byte) error {
	sig, err := mailgunFields(r, body)
	if err != nil {
		return fmt.Errorf("%w: %w", errUnverified, err)
	}
	got, err := hex.DecodeString(sig.Signature)
	if err != nil || len(got) != sha256.Size || sig.Token == "" || len(sig.Token) > 256 {
		return fmt.Errorf("%w: signature is not hex HMAC-SHA256, or token is empty or too long", errUnverified)
	}
	sent, now, err := checkWindow(v.clock, "signature.timestamp", string(sig.Timestamp))
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, v.key)
	mac.Write([]byte(sig.Timestamp))
	mac.Write([]byte(sig.Token))
	if !hmac.Equal(got, mac.Sum(nil)) {
		return fmt.Errorf("%w: signature mismatch", errUnverified)
	}
	if !v.seen.add(sig.Token, sent.Add(WebhookTolerance), now) {
		return fmt.Errorf("%w: token already seen, or replay memory full", errUnverified)
	}
	return nil
}

// mailgunFields finds timestamp, token and signature in a JSON body's signature member or in a
// form body's fields.
func mailgunFields(r *http.Request, body []byte) (mailgunSignature, error) {
	var sig mailgunSignature
	if isFormRequest(r) {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return sig, errors.New("form body does not parse")
		}
		sig = mailgunSignature{Timestamp: json.Number(form.Get("timestamp")), Token: form.Get("token"), Signature: form.Get("signature")}
		return sig, nil
	}
	var doc struct {
		Signature *mailgunSignature `json:"signature"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil || doc.Signature == nil {
		return sig, errors.New("body is not JSON with a signature member {timestamp, token, signature}")
	}
	return *doc.Signature, nil
}
