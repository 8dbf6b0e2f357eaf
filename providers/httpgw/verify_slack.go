package httpgw

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"switchboard/engine"
)

// Headers of Slack's request signing.
const (
	SlackSignatureHeader = "X-Slack-Signature"
	SlackTimestampHeader = "X-Slack-Request-Timestamp"
)

// slackReplayCapacity bounds the remembered callbacks of one provider.
const slackReplayCapacity = 1 << 16

// slackVerifier checks Slack's signed requests: X-Slack-Signature is "v0=" and the hex
// HMAC-SHA256, keyed with the app's signing secret, of "v0:", the X-Slack-Request-Timestamp
// text, ":" and the raw body. The timestamp must lie within WebhookTolerance of the clock either
// way; a verified (timestamp, signature) pair is refused again within that window (Slack's
// retries carry a fresh timestamp and signature).
type slackVerifier struct {
	secret []byte
	clock  engine.Clock
	seen   *replayCache
}

func newSlackVerifier(cfg VerifierConfig, clock engine.Clock) (Verifier, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("signing secret is empty")
	}
	return &slackVerifier{secret: append([]byte(nil), cfg.Secret...), clock: clock, seen: newReplayCache(slackReplayCapacity)}, nil
}

// Verify checks the headers, the timestamp window, the signature, then the replay memory.
func (v *slackVerifier) Verify(r *http.Request, _ string, body []byte) error {
	sigText, err := singleHeader(r, SlackSignatureHeader)
	if err != nil {
		return err
	}
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(sigText), "v0=")
	got, decErr := hex.DecodeString(hexSig)
	if !ok || decErr != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: %s is not v0=<hex HMAC-SHA256>", errUnverified, SlackSignatureHeader)
	}
	tsText, err := singleHeader(r, SlackTimestampHeader)
	if err != nil {
		return err
	}
	sent, now, err := checkWindow(v.clock, SlackTimestampHeader, tsText)
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, v.secret)
	mac.Write([]byte("v0:"))
	mac.Write([]byte(tsText))
	mac.Write([]byte{':'})
	mac.Write(body)
	want := mac.Sum(nil)
	if !hmac.Equal(got, want) {
		return fmt.Errorf("%w: signature mismatch", errUnverified)
	}
	if !v.seen.add(tsText+":"+hex.EncodeToString(want), sent.Add(WebhookTolerance), now) {
		return fmt.Errorf("%w: timestamp and signature already seen, or replay memory full", errUnverified)
	}
	return nil
}
