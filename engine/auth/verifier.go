package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"switchboard/engine"
)

// maxTokenBytes caps the token of an Authorization header; real access tokens are a few KiB.
const maxTokenBytes = 16 << 10

// acceptedAlgs is the signature algorithm allow-list: no "none", no HMAC.
var acceptedAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

func acceptedAlg(alg string) bool {
	for _, a := range acceptedAlgs {
		if string(a) == alg {
			return true
		}
	}
	return false
}

// Principal is an authenticated caller. It is shared with the token cache: callers must treat it,
// and especially Scopes, as read-only.
type Principal struct {
	// Issuer is the token's iss (the configured issuer).
	Issuer string
	// Subject is the token's sub, never empty.
	Subject string
	// ClientID is the OAuth client, one of the allowed clients.
	ClientID string
	// Scopes are the granted scopes, in token order.
	Scopes []string
	// ExpiresAt is the token's exp.
	ExpiresAt time.Time
}

// Caller returns the caller key (issuer, NUL, subject): the identity rate limits and
// idempotency records are kept under.
func (p *Principal) Caller() string { return CallerKey(p.Issuer, p.Subject) }

// HasScope reports whether the token grants scope.
func (p *Principal) HasScope(scope string) bool {
	for _, s := range p.Scopes {
		if s == scope {
			return true
		}
	}
	return false
}

// CallerKey joins issuer and subject with a NUL byte, which neither may contain.
func CallerKey(issuer, subject string) string { return issuer + "\x00" + subject }

// Verifier checks bearer access tokens. It is safe for concurrent use.
type Verifier struct {
	cfg     Config
	clock   engine.Clock
	allowed map[string]struct{}
	types   map[string]bool // canonical token types accepted
	keys    *keySource
	cache   *tokenCache

	// verifications counts signature checks; tests read it to prove the cache works.
	verifications atomic.Int64
}

// NewVerifier validates cfg and returns a verifier. With JWKSFile it reads the key set now (and
// never again); with JWKSURI it fetches the set when the first token needs it (call Refresh to
// fetch it at start-up). It does no network I/O itself.
func NewVerifier(cfg Config, clock engine.Clock) (*Verifier, error) {
	if clock == nil {
		return nil, errors.New("auth: NewVerifier needs a clock")
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	v := &Verifier{
		cfg:     cfg,
		clock:   clock,
		allowed: make(map[string]struct{}, len(cfg.AllowedClients)),
		types:   make(map[string]bool, len(cfg.TokenTypes)),
		cache:   newTokenCache(defaultCacheEntries),
	}
	for _, t := range cfg.TokenTypes {
		v.types[t] = true
	}
	for _, c := range cfg.AllowedClients {
		v.allowed[c] = struct{}{}
	}
	if cfg.JWKSFile != "" {
		if v.keys, err = newFileKeySource(cfg.JWKSFile); err != nil {
			return nil, err
		}
	} else {
		v.keys = newURLKeySource(cfg.JWKSURI, cfg.HTTPClient)
	}
	return v, nil
}

// Refresh fetches the JWK Set now (a no-op for JWKSFile). serve calls it at start-up so that the
// first request does not pay the fetch, and to report an unreachable issuer early; a failure is
// not fatal, since Authenticate fetches again when a token needs a key.
func (v *Verifier) Refresh(ctx context.Context) error {
	if err := v.keys.refresh(ctx, v.clock.Now()); err != nil {
		return fmt.Errorf("auth: refresh JWKS: %w", err)
	}
	return nil
}

// Authenticate verifies a raw Authorization header value ("Bearer <jwt>") and returns the caller.
// Every refusal is an *engine.Problem with code authentication.refused and a caller-safe detail
// (give it to WWWAuthenticate for the challenge). When the key set must be fetched, cannot be,
// and no cached key fits, the error is service.unavailable instead: the issuer being down is our
// environment failing, not the caller's fault.
//
// A verified token is cached by its SHA-256 until exp (plus the leeway): presenting it again
// costs a hash and a map lookup, not a signature check. A cached token stays accepted until then
// even if its key leaves the key set.
func (v *Verifier) Authenticate(ctx context.Context, authorization string) (*Principal, error) {
	raw, err := bearerToken(authorization)
	if err != nil {
		return nil, err
	}
	now := v.clock.Now()
	sum := sha256.Sum256([]byte(raw))
	if p, ok := v.cache.get(sum, now); ok {
		return p, nil
	}
	p, err := v.verify(ctx, raw, now)
	if err != nil {
		return nil, err
	}
	v.cache.put(sum, p, p.ExpiresAt.Add(v.cfg.Leeway), now)
	out := *p // the cached value stays the cache's own
	return &out, nil
}

// bearerToken extracts the token from an Authorization header value (RFC 6750 2.1; the scheme is
// case-insensitive) and checks it has the shape of a compact JWS.
func bearerToken(authorization string) (string, error) {
	h := strings.TrimSpace(authorization)
	if h == "" {
		return "", refused(detailMissing, errNoCredentials)
	}
	scheme, rest, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", refused(detailNotBearer, errNoCredentials)
	}
	tok := strings.TrimLeft(rest, " ")
	if tok == "" {
		return "", refused(detailMissing, nil)
	}
	if len(tok) > maxTokenBytes {
		return "", refused(detailTooLong, nil)
	}
	dots := 0
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case c == '.':
			dots++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			// Not base64url: padding, standard base64, spaces, controls.
			return "", refused(detailMalformed, nil)
		}
	}
	if dots != 2 {
		return "", refused(detailMalformed, nil)
	}
	return tok, nil
}

// verify checks a token that is not in the cache.
func (v *Verifier) verify(ctx context.Context, raw string, now time.Time) (*Principal, error) {
	tok, err := jwt.ParseSigned(raw, acceptedAlgs)
	if err != nil {
		var algErr *jose.ErrUnexpectedSignatureAlgorithm
		if errors.As(err, &algErr) {
			return nil, refused(detailAlgorithm, err)
		}
		return nil, refused(detailMalformed, err)
	}
	if len(tok.Headers) != 1 {
		return nil, refused(detailMalformed, nil)
	}
	h := tok.Headers[0]
	if !acceptedAlg(h.Algorithm) {
		return nil, refused(detailAlgorithm, nil)
	}
	typ, ok := tokenType(h)
	if !ok || !v.types[typ] {
		return nil, refused(detailType, nil)
	}
	keys, err := v.keys.lookup(ctx, h.KeyID, h.Algorithm, now)
	if err != nil {
		return nil, err
	}
	if err := v.checkSignature(tok, keys); err != nil {
		return nil, err
	}
	var std jwt.Claims
	var extra map[string]any
	if err := tok.UnsafeClaimsWithoutVerification(&std, &extra); err != nil { // verified above
		return nil, refused(detailClaims, err)
	}
	if typ != TokenTypeAccess && idTokenMarks(extra) {
		return nil, refused(detailIDToken, nil)
	}
	return v.checkClaims(&std, extra, now)
}

// checkSignature accepts the token when one of the candidate keys verifies its signature.
func (v *Verifier) checkSignature(tok *jwt.JSONWebToken, keys []verificationKey) error {
	var last error
	for _, k := range keys {
		v.verifications.Add(1)
		if err := tok.Claims(k.pub); err != nil {
			last = err
			continue
		}
		return nil
	}
	return refused(detailSignature, last)
}
