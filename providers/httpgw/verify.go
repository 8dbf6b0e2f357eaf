package httpgw

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"time"

	"switchboard/engine"
)

// Verifier kinds (callbackVerifier.kind, docs/runtime.md, "Callback verifiers").
const (
	VerifierHMACSHA256Body   = "hmac-sha256-body"
	VerifierTwilio           = "twilio"
	VerifierStandardWebhooks = "standard-webhooks"
	VerifierPathToken        = "path-token"
	// VerifierVonageSignature is the Vonage SMS API's signed callbacks (sig and timestamp
	// parameters; verify_vonage.go).
	VerifierVonageSignature = "vonage-signature"
	// VerifierECDSAP256 is SendGrid's signed Event Webhook (ECDSA P-256 over timestamp and
	// body; verify_ecdsa.go).
	VerifierECDSAP256 = "ecdsa-p256"
	// VerifierEd25519 is an Ed25519 signature of "timestamp|body", as Telnyx signs
	// (verify_ed25519.go).
	VerifierEd25519 = "ed25519"
	// VerifierSlack is Slack's signing secret scheme (v0= HMAC-SHA256; verify_slack.go).
	VerifierSlack = "slack"
	// VerifierMailgun is Mailgun's webhook signing key scheme (the body's signature member;
	// verify_mailgun.go).
	VerifierMailgun = "mailgun"
	// VerifierPlivoV3 is Plivo's X-Plivo-Signature-V3 (verify_plivo.go).
	VerifierPlivoV3 = "plivo-v3"
	// VerifierBasic is HTTP Basic authentication of the callback (verify_basic.go).
	VerifierBasic = "basic"
)

// Verifier proves that a callback request comes from the provider. Implementations live in
// verify_<scheme>.go; adding a scheme is one file and one entry in verifierKinds.
type Verifier interface {
	// Verify returns nil only when the request is proven authentic: r is the callback request,
	// token the last route segment (empty without one) and body the raw request body, read
	// before any parsing. The error explains the refusal for logs; callers must never show it
	// to the caller (VerifyCallback returns engine.ErrCallbackUnverified instead). Comparisons
	// of secrets and signatures are constant-time. Verify is safe for concurrent use.
	Verify(r *http.Request, token string, body []byte) error
}

// errUnverified is the generic refusal verifiers wrap with their reason.
var errUnverified = errors.New("callback unverified")

// verifierKinds maps a kind to its constructor. It is a constant table.
var verifierKinds = map[string]func(VerifierConfig, engine.Clock) (Verifier, error){
	VerifierHMACSHA256Body:   newHMACBodyVerifier,
	VerifierTwilio:           newTwilioVerifier,
	VerifierStandardWebhooks: newStandardWebhooksVerifier,
	VerifierPathToken:        newPathTokenVerifier,
	VerifierVonageSignature:  newVonageVerifier,
	VerifierECDSAP256:        newECDSAVerifier,
	VerifierEd25519:          newEd25519Verifier,
	VerifierSlack:            newSlackVerifier,
	VerifierMailgun:          newMailgunVerifier,
	VerifierPlivoV3:          newPlivoVerifier,
	VerifierBasic:            newBasicVerifier,
}

// NewVerifier builds the verifier cfg describes. A nil cfg gives a verifier that refuses every
// callback (there is no unauthenticated callback). clock dates timestamped schemes; nil means
// the system clock.
func NewVerifier(cfg *VerifierConfig, clock engine.Clock) (Verifier, error) {
	if cfg == nil {
		return refuseAll{}, nil
	}
	if clock == nil {
		clock = engine.SystemClock{}
	}
	build, ok := verifierKinds[cfg.Kind]
	if !ok {
		return nil, fmt.Errorf("callback verifier: unknown kind %q", cfg.Kind)
	}
	v, err := build(*cfg, clock)
	if err != nil {
		return nil, fmt.Errorf("callback verifier %s: %w", cfg.Kind, err)
	}
	return v, nil
}

// refuseAll is the verifier of a provider without callbackVerifier.
type refuseAll struct{}

// Verify refuses every request.
func (refuseAll) Verify(*http.Request, string, []byte) error {
	return fmt.Errorf("%w: no callback verifier configured", errUnverified)
}

// checkWindow parses a Unix-seconds timestamp and refuses one further than WebhookTolerance
// from the clock, either way. It returns when the request says it was sent, and now.
func checkWindow(clock engine.Clock, name, tsText string) (sent, now time.Time, err error) {
	ts, err := parseUnixSeconds(tsText)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("%w: %s: %w", errUnverified, name, err)
	}
	now, sent = clock.Now(), time.Unix(ts, 0)
	if now.Sub(sent) > WebhookTolerance || sent.Sub(now) > WebhookTolerance {
		return time.Time{}, time.Time{}, fmt.Errorf("%w: %s is outside the %s window", errUnverified, name, WebhookTolerance)
	}
	return sent, now, nil
}

// VerifierKinds lists the callback verifier kinds this provider implements, sorted.
func VerifierKinds() []string { return slices.Sorted(maps.Keys(verifierKinds)) }
