package auth

import (
	"errors"
	"strings"

	"switchboard/engine"
)

// Realm is the realm of every Bearer challenge.
const Realm = "switchboard"

// errNoCredentials marks refusals of requests that carried no Bearer token at all (no
// Authorization header, or another scheme): their challenge has no error code (RFC 6750 3.1).
var errNoCredentials = errors.New("auth: no bearer credentials")

// Caller-safe details of refusals. None of them echoes the token or a claim value.
const (
	detailMissing        = "a Bearer access token is required"
	detailNotBearer      = "the Authorization header does not carry a Bearer token"
	detailMalformed      = "the access token is malformed"
	detailTooLong        = "the access token is too long"
	detailAlgorithm      = "the access token's signing algorithm is not accepted"
	detailType           = "the access token's type (typ) is not accepted"
	detailIDToken        = "the token is an ID token, not an access token"
	detailUnknownKey     = "the access token's signing key is unknown"
	detailSignature      = "the access token's signature does not verify"
	detailClaims         = "the access token's claims are malformed"
	detailIssuer         = "the access token's issuer is not accepted"
	detailAudience       = "the access token is not meant for this service"
	detailNoExpiry       = "the access token has no expiry"
	detailExpired        = "the access token has expired"
	detailNotYetValid    = "the access token is not valid yet"
	detailIssuedInFuture = "the access token is issued in the future"
	detailNoSubject      = "the access token has no subject"
	detailClient         = "the access token's client is not allowed"
	detailScopeClaim     = "the access token's scope claim is malformed"
	detailNoProfile      = "the access token's client has no access profile"
	detailMissingScope   = "the access token lacks a scope the client's access profile requires"
	detailKeysDown       = "the token signing keys cannot be fetched now"
)

// refused returns an authentication.refused problem with a caller-safe detail and an internal
// cause (which may be nil).
func refused(detail string, cause error) *engine.Problem {
	return &engine.Problem{Code: engine.CodeAuthenticationRefused, Detail: detail, Err: cause}
}

// WWWAuthenticate returns the WWW-Authenticate header value for an error of Authenticate or
// Authorize:
//
//   - no token at all (or another scheme), or err nil: `Bearer realm="switchboard"`;
//   - authentication.refused: `Bearer realm="switchboard", error="invalid_token",
//     error_description="…"`;
//   - operation.not-authorized: `Bearer realm="switchboard", error="insufficient_scope",
//     error_description="…"`;
//   - anything else (service.unavailable, rate limits): "" (send no challenge).
func WWWAuthenticate(err error) string {
	const bare = `Bearer realm="` + Realm + `"`
	if err == nil || errors.Is(err, errNoCredentials) {
		return bare
	}
	var p *engine.Problem
	if !errors.As(err, &p) {
		return ""
	}
	var code string
	switch p.Code {
	case engine.CodeAuthenticationRefused:
		code = "invalid_token"
	case engine.CodeOperationNotAuthz:
		code = "insufficient_scope"
	default:
		return ""
	}
	return bare + `, error="` + code + `", error_description="` + quoteSafe(p.Detail) + `"`
}

// quoteSafe keeps the characters RFC 6750 allows in error_description (%x20-21 / %x23-5B /
// %x5D-7E), dropping quotes, backslashes and anything else.
func quoteSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e || r == '"' || r == '\\' {
			return -1
		}
		return r
	}, s)
}
