package runtime

import (
	"net/url"
	"time"

	"switchboard/engine/stdwebhook"
)

// Provider kinds, as in the package manifest.
const (
	KindHTTP = "http"
	KindSMTP = "smtp"
	KindPeer = "peer"
)

// HTTP provider authentication kinds (docs/runtime.md, "Authentication kinds").
const (
	AuthNone                    = "none"
	AuthBasic                   = "basic"
	AuthStaticAuthorization     = "static-authorization"
	AuthStaticAPIKey            = "static-api-key"
	AuthOAuth2ClientCredentials = "oauth2-client-credentials"
	// AuthAWSSigV4 signs every request with AWS Signature Version 4.
	AuthAWSSigV4 = "aws-sigv4"
	// AuthPathToken writes a secret token as a path segment under baseUrl (docs/runtime.md).
	AuthPathToken = "path-token"
	// AuthGoogleServiceAccount exchanges a JWT grant signed with a Google service-account key
	// for an OAuth 2.0 access token (Firebase Cloud Messaging).
	AuthGoogleServiceAccount = "google-service-account"
	// AuthAPNsToken signs an ES256 provider token with an APNs .p8 key (Apple Push
	// Notification service).
	AuthAPNsToken = "apns-token"
)

// Callback verifier kinds (docs/runtime.md, "Callback verifiers").
const (
	VerifierHMACSHA256Body   = "hmac-sha256-body"
	VerifierTwilio           = "twilio"
	VerifierStandardWebhooks = "standard-webhooks"
	VerifierPathToken        = "path-token"
	// VerifierVonageSignature is the Vonage SMS API's signed callbacks (sig and timestamp
	// parameters, hashed with the account's signature method).
	VerifierVonageSignature = "vonage-signature"
	// VerifierECDSAP256 is SendGrid's signed Event Webhook (ECDSA P-256 over timestamp and body).
	VerifierECDSAP256 = "ecdsa-p256"
	// VerifierEd25519 is an Ed25519 signature of "timestamp|body" (Telnyx).
	VerifierEd25519 = "ed25519"
	// VerifierSlack is Slack's signing secret scheme (v0= HMAC-SHA256 of v0:timestamp:body).
	VerifierSlack = "slack"
	// VerifierMailgun is Mailgun's webhook signing key (HMAC-SHA256 of timestamp+token).
	VerifierMailgun = "mailgun"
	// VerifierPlivoV3 is Plivo's X-Plivo-Signature-V3.
	VerifierPlivoV3 = "plivo-v3"
	// VerifierBasic is HTTP Basic authentication of the callback.
	VerifierBasic = "basic"
)

// Signature methods of vonage-signature (the Vonage dashboard's setting, which must match).
var vonageSignatureMethods = []string{"md5hash", "md5", "sha1", "sha256", "sha512"}

// SMTP TLS modes.
const (
	TLSStartTLS = "starttls"
	TLSImplicit = "implicit"
	TLSNone     = "none"
)

// ProviderConfig is the connection of one provider declared by the package. Exactly one of
// HTTP, SMTP and Peer is set, matching Kind.
type ProviderConfig struct {
	ID, Kind string
	HTTP     *HTTPProvider
	SMTP     *SMTPProvider
	Peer     *PeerProvider
}

// HTTPProvider connects an http provider to its gateway.
type HTTPProvider struct {
	// BaseURL is https, or http only towards a loopback host; it always ends with "/" (Load
	// adds a missing one, so adapter targets resolve below it) and carries no user
	// information, query or fragment.
	BaseURL *url.URL
	// Timeout bounds one whole send (timeoutMilliseconds, default 5000).
	Timeout time.Duration
	// MaximumResponseBytes caps the response body read (default 65536).
	MaximumResponseBytes int64
	// ConcurrencyLimit and RatePerSecond, when positive, lower the package's capabilities;
	// CheckPackage refuses values above them. Zero means "as the package says".
	ConcurrencyLimit int
	RatePerSecond    float64
	Authentication   HTTPAuth
	// CallbackVerifier proves delivery reports come from the gateway; nil = no callbacks
	// accepted.
	CallbackVerifier *Verifier
	// Parameters are non-secret values the adapter reads as profile.parameters (an account id,
	// a region): at most 32, names identifiers, values at most 256 characters. Never nil.
	Parameters map[string]string
	// HTTP2 makes every request HTTP/2 (http2: true), as APNs requires; connections are reused.
	HTTP2 bool
	// TrustedCAFile is the absolute path of a PEM bundle to trust instead of the system roots
	// for the gateway (trustedCaFile), "" for the system roots.
	TrustedCAFile string
}

// HTTPAuth is how requests to the gateway are authenticated. Which fields are set depends on
// Kind:
//
//	none                       nothing (loopback baseUrl only)
//	basic                      Username, Password (usernameRef, passwordRef)
//	static-authorization       Scheme (default Bearer), Token (tokenRef)
//	static-api-key             Header (lower case), Token (tokenRef)
//	oauth2-client-credentials  TokenURL, ClientID, ClientSecret (clientSecretRef), Scopes
//	aws-sigv4                  Service, Region, AccessKeyID (accessKeyIdRef), SecretAccessKey
//	                           (secretAccessKeyRef), SessionToken (sessionTokenRef, optional)
//	google-service-account     ServiceAccount (serviceAccountRef: the JSON key), Scopes
//	                           (default the Firebase Cloud Messaging scope)
//	apns-token                 Key (keyRef: the .p8 PEM), KeyID (keyId), TeamID (teamId)
//
// Every credential is printable ASCII without surrounding white space: Load refuses a secret
// file with a trailing newline here rather than let every send fail.
type HTTPAuth struct {
	Kind               string
	Username, Password Secret
	Scheme             string
	Header             string
	Token              Secret
	// Prefix is written before a path-token's token in its path segment (for example bot).
	Prefix string
	// TokenURL is https, or http only towards a loopback host.
	TokenURL     *url.URL
	ClientID     string
	ClientSecret Secret
	Scopes       []string
	// Service and Region scope an aws-sigv4 signature (for example sns, eu-west-1).
	Service, Region                            string
	AccessKeyID, SecretAccessKey, SessionToken Secret
	// ServiceAccount is a Google service account's JSON key (google-service-account).
	ServiceAccount Secret
	// Key is an APNs signing key's PEM (apns-token); KeyID and TeamID name it and its team.
	Key           Secret
	KeyID, TeamID string
}

// Verifier checks provider callbacks. Which fields are set depends on Kind:
//
//	hmac-sha256-body   Header (lower case), Encoding (hex|base64, default hex), Secret
//	twilio             URL (the public callback URL exactly as the gateway calls it), Secret
//	standard-webhooks  Secret (the whsec_… text as stored; Key decodes it)
//	path-token         Token (at least 16 URL-safe characters)
//	vonage-signature   SignatureMethod (md5hash, md5, sha1, sha256 or sha512; required, as set
//	                   in the Vonage dashboard), Secret (the signature secret)
//	ecdsa-p256         PublicKey (member publicKey: the P-256 key as SendGrid shows it, base64
//	                   of a DER SubjectPublicKeyInfo, or a PEM PUBLIC KEY block; kept as DER)
//	ed25519            SignatureHeader, TimestampHeader (lower case), PublicKey (publicKeyRef: the
//	                   key as Telnyx shows it, base64 of its 32 bytes, or PEM; kept as 32 bytes)
//	slack              Secret (the app's signing secret)
//	mailgun            Secret (the webhook signing key)
//	plivo-v3           URL (the public callback URL), Secret (the auth token)
//	basic              Username, Password (usernameRef, passwordRef)
//
// Secrets and tokens are printable ASCII without surrounding white space (Load refuses a
// trailing newline, which would make every signature check fail).
type Verifier struct {
	Kind            string
	Header          string
	Encoding        string
	URL             string
	Secret          Secret
	Token           Secret
	SignatureMethod string
	// PublicKey is the DER SubjectPublicKeyInfo of an ECDSA P-256 key, or the 32 bytes of an
	// Ed25519 key (not secrets).
	PublicKey []byte
	// SignatureHeader and TimestampHeader name the ed25519 headers.
	SignatureHeader, TimestampHeader string
	// Username and Password are the basic verifier's credentials.
	Username, Password Secret
}

// Key returns the HMAC key of the verifier: for standard-webhooks the bytes the whsec_ secret
// encodes, for the other kinds Secret's bytes (nil for path-token). Load has already checked
// that a standard-webhooks secret decodes.
func (v *Verifier) Key() []byte {
	if v.Kind == VerifierStandardWebhooks {
		key, _ := decodeWebhookSecret(v.Secret.value)
		return key
	}
	return v.Secret.Value()
}

// decodeWebhookSecret decodes a Standard Webhooks secret: "whsec_" and standard base64.
func decodeWebhookSecret(b []byte) ([]byte, bool) { return stdwebhook.DecodeSecret(string(b)) }

// SMTPProvider connects an smtp provider to its relay.
type SMTPProvider struct {
	Host string
	// Port defaults to 587 for starttls and 465 for implicit; tls none needs it written.
	Port int
	// TLS is starttls (default), implicit, or none (only towards a loopback host).
	TLS string
	// Username and Password (authentication.usernameRef, passwordRef) are both set or both
	// zero (no AUTH).
	Username, Password Secret
	// DKIM, when set, signs every message.
	DKIM *DKIM
	// TrustedCAFile is the absolute path of a PEM bundle to trust instead of the system roots
	// (member trustedCaFile); "" = system roots.
	TrustedCAFile string
	// Timeout bounds one whole SMTP conversation (timeoutMilliseconds, default 30000).
	Timeout time.Duration
}

// DKIM holds a DKIM signing key. Load checks PrivateKey is a PEM RSA (PKCS #1 or #8) or
// Ed25519 (PKCS #8) private key.
type DKIM struct {
	Domain, Selector string
	PrivateKey       Secret
}

// PeerProvider configures a libp2p host.
type PeerProvider struct {
	// IdentityKey is the host's persistent private key, as `switchboard peer keygen` wrote it.
	IdentityKey Secret
	// Listen holds the multiaddrs to listen on; empty = dial out (and through relays) only.
	Listen []string
	// Protocol is the one-shot stream protocol id; default /switchboard/1.0.0/message.
	Protocol string
	// PooledProtocol is the pooled protocol's id; empty = the pooled mode is off.
	PooledProtocol string
	// Pooled times the pooled mode's streams.
	Pooled PooledTiming
	// Relays holds circuit relay v2 multiaddrs, each with its /p2p/ peer id.
	Relays       []string
	RelayService RelayService
	// AddressBook maps peer ids to the multiaddrs they are reached at.
	AddressBook map[string][]string
	// AllowedPeers holds the peer ids whose envelopes the inbox takes, sorted; AnyPeer says
	// every peer's are taken (allowedPeers: any). Without allowedPeers in the file,
	// AllowedPeers holds the address book's peer ids.
	AllowedPeers []string
	AnyPeer      bool
	// InboxQuota bounds what each allowed peer may put in the inbox.
	InboxQuota InboxQuota
}

// InboxQuota is a peer provider's inboxQuota: per sending peer, at most MessagesPerMinute new
// envelopes a minute and BytesPerDay payload bytes a UTC day (defaults
// DefaultInboxMessagesPerMinute and DefaultInboxBytesPerDay).
type InboxQuota struct {
	MessagesPerMinute int
	BytesPerDay       int64
}

// PooledTiming is a peer provider's keepaliveSeconds, idleCloseSeconds and
// requestTimeoutSeconds (defaults DefaultKeepaliveSeconds, DefaultIdleCloseSeconds,
// DefaultRequestTimeoutSeconds).
type PooledTiming struct {
	Keepalive, IdleClose, RequestTimeout time.Duration
}

// RelayService says whether this host serves as a circuit relay for others, and what one
// circuit may carry: CircuitDuration and CircuitBytes (each direction) before the relay resets
// it (defaults DefaultRelayCircuitSeconds, DefaultRelayCircuitBytes).
type RelayService struct {
	Enabled         bool
	CircuitDuration time.Duration
	CircuitBytes    int64
}
