package httpgw

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"switchboard/engine"
	"switchboard/scripting"
)

// Defaults applied by New to zero Config members.
const (
	DefaultTimeout              = 5 * time.Second
	DefaultMaximumResponseBytes = 64 << 10
	DefaultConcurrencyLimit     = 16
	DefaultMethod               = http.MethodPost
)

// Authentication kinds (docs/runtime.md, "Authentication kinds").
const (
	AuthNone                   = "none"
	AuthBasic                  = "basic"
	AuthStaticAuthorization    = "static-authorization"
	AuthStaticAPIKey           = "static-api-key"
	AuthOAuth2ClientCredential = "oauth2-client-credentials"
	// AuthAWSSigV4 signs every request with AWS Signature Version 4 (credentials_sigv4.go).
	AuthAWSSigV4 = "aws-sigv4"
	// AuthPathToken writes Prefix and Token as the first path segment under the baseUrl
	// (credentials_path.go), for gateways that take the credential in the URL (Telegram).
	AuthPathToken = "path-token"
	// AuthGoogleServiceAccount exchanges a JWT grant signed with a service account's key for
	// an access token (credentials_google.go), as Firebase Cloud Messaging requires.
	AuthGoogleServiceAccount = "google-service-account"
	// AuthAPNsToken sends an ES256 provider token made from an APNs signing key
	// (credentials_apns.go).
	AuthAPNsToken = "apns-token"
)

// Observer events. The class argument of an Observer call is given beside each.
const (
	// EventScript: one adapter call ended; class is "ok" or a scripting failure class.
	EventScript = "script"
	// EventCallback: one callback was handled; class is "unverified", "unreadable", "deferred" (not read now: out of time), "ignored"
	// (receipt returned null) or "parsed".
	EventCallback = "callback"
)

// Config is everything one http provider needs, as plain values already resolved by the
// runtime loader (secrets read, URLs parsed). New validates it.
type Config struct {
	// ID is the provider id of the package (used in logs and script names).
	ID string
	// ScriptName names the adapter in errors and logs (for example its path in the package).
	ScriptName string
	// Source is the adapter's JavaScript source.
	Source string
	// Method is the HTTP method of every request (any case); empty means POST.
	Method string
	// RequestHeaders are the only headers prepare may set (matched case-insensitively).
	RequestHeaders []string
	// ResponseHeaders are the only response headers interpret may read.
	ResponseHeaders []string
	// ReceiptsCallback says the gateway posts delivery reports: the adapter must define receipt,
	// and accepted outcomes carry report none (else unavailable).
	ReceiptsCallback bool
	// InboundChannel is the channel of the inbound messages the gateway posts (sms when empty):
	// the channel of the package's sender profiles that use the provider.
	InboundChannel engine.Channel
	// ConcurrencyLimit caps requests in flight to the gateway; 0 means DefaultConcurrencyLimit.
	ConcurrencyLimit int
	// RatePerSecond caps requests started per second; 0 means no limit.
	RatePerSecond float64
	// IdempotentSubmit passes the message's idempotency key to prepare (else null).
	IdempotentSubmit bool
	// BaseURL is the gateway's base; every target resolves under it. Its path is treated as a
	// folder (a trailing slash is added). It may not carry a query, fragment or user info.
	BaseURL *url.URL
	// Timeout bounds one request from dial to the last byte of the answer; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaximumResponseBytes caps the answer read; 0 means DefaultMaximumResponseBytes.
	MaximumResponseBytes int64
	// Auth is the credential added to every request.
	Auth Auth
	// Verifier checks callbacks; nil means every callback is unverified.
	Verifier *VerifierConfig
	// CallbackURL is the full public URL of this provider's callback route (with the token for
	// path-token), given to prepare as profile.callbackUrl; empty gives null.
	CallbackURL string
	// Parameters are the runtime file's non-secret values for the adapter (an account id, a
	// region), given to prepare as profile.parameters: at most MaxParameters entries, names
	// JavaScript identifiers, values at most MaxParameterChars characters.
	Parameters map[string]string
	// Limits lowers the sandbox limits; zero members keep scripting.DefaultLimits.
	Limits scripting.Limits
	// Logger receives provider and script logs, each with the attribute provider = ID (added
	// here: the caller's logger must not carry it); nil discards them.
	Logger *slog.Logger
	// Clock dates token expiry, Retry-After dates and webhook timestamps; nil means the system clock.
	Clock engine.Clock
	// HTTP2 makes every request to the gateway HTTP/2 (over TLS, or cleartext HTTP/2 towards
	// an http baseUrl), multiplexed over reused connections, as APNs requires.
	HTTP2 bool
	// TrustedCAFile is a PEM bundle trusted for the gateway's certificate instead of the
	// system roots; "" keeps the system roots.
	TrustedCAFile string
	// HTTPClient, when set, replaces the built client (tests). Its CheckRedirect is always
	// overridden so that redirects are never followed.
	HTTPClient *http.Client
	// Observer, when set, is told about script calls and callbacks (for metrics). It must be
	// safe for concurrent use and must not block.
	Observer func(event, class string)
}

// Auth is the credential of an http provider. Only the members its Kind uses are read.
type Auth struct {
	// Kind is none, basic, static-authorization, static-api-key, oauth2-client-credentials,
	// aws-sigv4, path-token, google-service-account or apns-token.
	Kind string
	// Username and Password are the basic credentials.
	Username, Password string
	// Scheme is the static-authorization scheme ("Bearer" when empty).
	Scheme string
	// Header is the static-api-key header name.
	Header string
	// Token is the static-authorization, static-api-key or path-token token.
	Token string
	// Prefix precedes the path-token's token in its segment (for example "bot").
	Prefix string
	// TokenURL, ClientID, ClientSecret and Scopes configure oauth2-client-credentials.
	TokenURL               string
	ClientID, ClientSecret string
	Scopes                 []string
	// Service, Region, AccessKeyID, SecretAccessKey and SessionToken (optional) configure
	// aws-sigv4.
	Service, Region                            string
	AccessKeyID, SecretAccessKey, SessionToken string
	// ServiceAccount is a service account's JSON key (google-service-account); Scopes are
	// the scopes its tokens are asked for.
	ServiceAccount []byte
	// Key is the APNs signing key's PEM (apns-token), KeyID its key id and TeamID the team's.
	Key           []byte
	KeyID, TeamID string
}

// VerifierConfig configures one callback verifier (docs/runtime.md, "Callback verifiers").
type VerifierConfig struct {
	// Kind is hmac-sha256-body, twilio, standard-webhooks, path-token, vonage-signature,
	// ecdsa-p256, ed25519, slack, mailgun, plivo-v3 or basic.
	Kind string
	// Header carries the hmac-sha256-body signature ("x-signature" when empty).
	Header string
	// Encoding of the hmac-sha256-body signature: hex (default) or base64.
	Encoding string
	// URL is the public callback URL the twilio and plivo-v3 schemes sign.
	URL string
	// Secret is the HMAC key (hmac-sha256-body), the auth token (twilio, plivo-v3), the whsec_
	// secret (standard-webhooks), the signature secret (vonage-signature), the signing secret
	// (slack) or the webhook signing key (mailgun).
	Secret []byte
	// SignatureHeader and TimestampHeader name the ed25519 scheme's headers ("telnyx-signature-
	// ed25519" and "telnyx-timestamp" when empty, as Telnyx sends them).
	SignatureHeader, TimestampHeader string
	// Username and Password are the basic scheme's credentials.
	Username, Password string
	// Token is the path-token secret.
	Token string
	// SignatureMethod is the vonage-signature hash, as set in the Vonage dashboard: md5hash,
	// md5, sha1, sha256 or sha512 (the last four are HMACs).
	SignatureMethod string
	// PublicKey is the ecdsa-p256 verification key (a DER SubjectPublicKeyInfo, its base64
	// text as SendGrid shows it, or a PEM PUBLIC KEY block) or the ed25519 one (the 32 raw
	// bytes, their base64 as Telnyx shows them, a DER SubjectPublicKeyInfo or a PEM block).
	PublicKey []byte
}

// runtimeOwnedHeaders are set by the runtime or by net/http; prepare may never set them even
// when the package declares them.
var runtimeOwnedHeaders = map[string]bool{
	"authorization": true, "proxy-authorization": true, "host": true, "content-length": true,
	"transfer-encoding": true, "connection": true, "keep-alive": true, "proxy-connection": true,
	"te": true, "trailer": true, "upgrade": true, "expect": true, "cookie": true,
}

// normalized returns a copy of cfg with defaults applied, or an error naming the bad member.
func (cfg Config) normalized() (Config, error) {
	if cfg.ID == "" {
		return cfg, errors.New("httpgw: config: ID is empty")
	}
	if cfg.Source == "" {
		return cfg, fmt.Errorf("httpgw %s: config: adapter source is empty", cfg.ID)
	}
	if cfg.ScriptName == "" {
		cfg.ScriptName = cfg.ID + "/adapter.js"
	}
	cfg.Method = strings.ToUpper(cfg.Method)
	switch cfg.Method {
	case "":
		cfg.Method = DefaultMethod
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return cfg, fmt.Errorf("httpgw %s: config: method %q is not supported", cfg.ID, cfg.Method)
	}
	base, err := normalizeBase(cfg.BaseURL)
	if err != nil {
		return cfg, fmt.Errorf("httpgw %s: config: baseUrl: %w", cfg.ID, err)
	}
	cfg.BaseURL = base
	if cfg.Timeout < 0 || cfg.MaximumResponseBytes < 0 || cfg.ConcurrencyLimit < 0 || cfg.RatePerSecond < 0 {
		return cfg, fmt.Errorf("httpgw %s: config: timeout, maximumResponseBytes, concurrencyLimit and ratePerSecond must not be negative", cfg.ID)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaximumResponseBytes == 0 {
		cfg.MaximumResponseBytes = DefaultMaximumResponseBytes
	}
	if cfg.ConcurrencyLimit == 0 {
		cfg.ConcurrencyLimit = DefaultConcurrencyLimit
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.Logger = cfg.Logger.With("provider", cfg.ID)
	if cfg.Clock == nil {
		cfg.Clock = engine.SystemClock{}
	}
	if cfg.Observer == nil {
		cfg.Observer = func(string, string) {}
	}
	return cfg, nil
}

// normalizeBase checks the base URL and returns a copy whose path ends with a slash.
func normalizeBase(u *url.URL) (*url.URL, error) {
	if u == nil {
		return nil, errors.New("missing")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, errors.New("must be an absolute http(s) URL without user info, query or fragment")
	}
	b := *u
	if !strings.HasSuffix(b.Path, "/") {
		b.Path += "/"
		if b.RawPath != "" {
			b.RawPath += "/"
		}
	}
	return &b, nil
}

// headerSet lower-cases names into a set.
func headerSet(names []string) map[string]bool {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[strings.ToLower(strings.TrimSpace(n))] = true
	}
	return set
}
