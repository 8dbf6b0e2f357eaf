package httpgw

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"switchboard/engine"
	"switchboard/engine/stdwebhook"
)

// WebhookTolerance is how far a Standard Webhooks timestamp may lie from the clock, either way.
const WebhookTolerance = stdwebhook.Tolerance

// webhookReplayCapacity bounds the remembered (webhook-id, timestamp) pairs of one provider.
const webhookReplayCapacity = 1 << 16

// standardWebhooksVerifier checks Standard Webhooks v1 signatures (HMAC-SHA256 over
// "id.timestamp.body", base64, several space-separated "v1,<sig>" entries for key rotation).
//
// The headers are webhook-id, webhook-timestamp and webhook-signature, or the same three named
// svix-id, svix-timestamp and svix-signature, as senders hosted by Svix name them (the scheme
// is the same). A request carrying headers of both sets is refused, whichever they are.
//
// Replay: a verified (webhook-id, webhook-timestamp) pair is remembered until its timestamp
// leaves the tolerance window and a second request with the same pair is refused. The pair,
// not the id alone, is the key because a sender's own retry of an event keeps the id but
// carries a fresh timestamp and signature; refusing it would lose the receipt when our first
// answer failed. A replayed request cannot change the timestamp without the key.
type standardWebhooksVerifier struct {
	key   []byte
	clock engine.Clock
	seen  *replayCache
}

func newStandardWebhooksVerifier(cfg VerifierConfig, clock engine.Clock) (Verifier, error) {
	// The prefix may be left out here (the runtime file requires it).
	key, ok := stdwebhook.DecodeSecret("whsec_" + strings.TrimPrefix(strings.TrimSpace(string(cfg.Secret)), "whsec_"))
	if !ok {
		return nil, errors.New("secret is not whsec_<base64>")
	}
	return &standardWebhooksVerifier{key: key, clock: clock, seen: newReplayCache(webhookReplayCapacity)}, nil
}

// Verify checks the headers, the timestamp window, the signatures, then the replay cache.
func (v *standardWebhooksVerifier) Verify(r *http.Request, _ string, body []byte) error {
	names, err := webhookHeaderNames(r)
	if err != nil {
		return err
	}
	id, err := singleHeader(r, names.id)
	if err != nil {
		return err
	}
	if len(id) > 256 || strings.ContainsAny(id, ". \t") {
		return fmt.Errorf("%w: %s is malformed", errUnverified, names.id)
	}
	tsText, err := singleHeader(r, names.timestamp)
	if err != nil {
		return err
	}
	ts, err := parseUnixSeconds(tsText)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errUnverified, names.timestamp, err)
	}
	now := v.clock.Now()
	sent := time.Unix(ts, 0)
	if now.Sub(sent) > WebhookTolerance {
		return fmt.Errorf("%w: %s is too old", errUnverified, names.timestamp)
	}
	if sent.Sub(now) > WebhookTolerance {
		return fmt.Errorf("%w: %s is in the future", errUnverified, names.timestamp)
	}
	sigs, err := singleHeader(r, names.signature)
	if err != nil {
		return err
	}
	if !stdwebhook.AnyMatches(sigs, stdwebhook.MAC(v.key, id, tsText, body)) {
		return fmt.Errorf("%w: no v1 signature matches", errUnverified)
	}
	if !v.seen.add(id+"\x00"+tsText, sent.Add(WebhookTolerance), now) {
		return fmt.Errorf("%w: id and timestamp already seen, or replay memory full", errUnverified)
	}
	return nil
}

// webhookHeaders names the three headers of a Standard Webhooks request.
type webhookHeaders struct{ id, timestamp, signature string }

// The two namings of the same headers: Standard Webhooks' own, and Svix's.
var (
	standardHeaderNames = webhookHeaders{"webhook-id", "webhook-timestamp", "webhook-signature"}
	svixHeaderNames     = webhookHeaders{"svix-id", "svix-timestamp", "svix-signature"}
)

// webhookHeaderNames returns the naming r uses: Svix's when it carries any svix- header,
// Standard Webhooks' otherwise. A request carrying headers of both is refused.
func webhookHeaderNames(r *http.Request) (webhookHeaders, error) {
	has := func(n webhookHeaders) bool {
		return len(r.Header.Values(n.id))+len(r.Header.Values(n.timestamp))+len(r.Header.Values(n.signature)) > 0
	}
	switch standard, svix := has(standardHeaderNames), has(svixHeaderNames); {
	case standard && svix:
		return webhookHeaders{}, fmt.Errorf("%w: both webhook- and svix- headers", errUnverified)
	case svix:
		return svixHeaderNames, nil
	}
	return standardHeaderNames, nil
}

// singleHeader returns the one value of a header, refusing none or several.
func singleHeader(r *http.Request, name string) (string, error) {
	values := r.Header.Values(name)
	if len(values) != 1 || values[0] == "" {
		return "", fmt.Errorf("%w: want exactly one non-empty %s header", errUnverified, name)
	}
	return values[0], nil
}

// parseUnixSeconds parses a decimal count of seconds (digits only, at most 12).
func parseUnixSeconds(s string) (int64, error) {
	if s == "" || len(s) > 12 || strings.Trim(s, "0123456789") != "" {
		return 0, errors.New("not a decimal count of seconds")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, errors.New("not a decimal count of seconds")
	}
	return n, nil
}
