package auth

import (
	"strings"

	jose "github.com/go-jose/go-jose/v4"
)

// Token types of Config.TokenTypes: what a token's JOSE typ header must say.
const (
	// TokenTypeAccess is an RFC 9068 JWT access token, typ at+jwt (or application/at+jwt). It is
	// the default and the only type that says, by itself, that the token is an access token.
	TokenTypeAccess = "at+jwt"
	// TokenTypeJWT is a plain JWT, typ JWT (or application/jwt): what most identity providers
	// give their access tokens. ID tokens are typed so too; see idTokenMarks.
	TokenTypeJWT = "JWT"
	// TokenTypeUntyped is a token without a typ header (RFC 7519 makes it optional; Dex leaves
	// it out). It is never accepted unless listed.
	TokenTypeUntyped = "untyped"
)

// ParseTokenType reads a tokenTypes entry: at+jwt and JWT compare case-insensitively, with or
// without the "application/" prefix (RFC 7515 4.1.9), and untyped names a token without typ.
// It returns the canonical form (one of the TokenType constants) and whether the entry is one.
func ParseTokenType(s string) (string, bool) {
	if strings.EqualFold(s, TokenTypeUntyped) {
		return TokenTypeUntyped, true
	}
	return headerTypeValue(s)
}

// headerTypeValue reads a typ header value: at+jwt or JWT, case-insensitive, with or without
// the "application/" prefix. Anything else, "untyped" included, is no type we know.
func headerTypeValue(s string) (string, bool) {
	s = strings.ToLower(s)
	s = strings.TrimPrefix(s, "application/")
	switch s {
	case "at+jwt":
		return TokenTypeAccess, true
	case "jwt":
		return TokenTypeJWT, true
	}
	return "", false
}

// tokenType returns the type of a token by its header: TokenTypeUntyped without typ, the
// canonical type of a known typ, and false for any other typ (a non-string one included).
func tokenType(h jose.Header) (string, bool) {
	raw, present := h.ExtraHeaders[jose.HeaderType]
	if !present {
		return TokenTypeUntyped, true
	}
	s, ok := raw.(string)
	if !ok {
		return "", false
	}
	return headerTypeValue(s)
}

// idTokenMarks reports whether claims carry a mark of an OpenID Connect ID token that no access
// token needs: nonce (echoed from the sign-in request), at_hash or c_hash (hashes binding the ID
// token to the access token or code it came with). An ID token is typed JWT as plain access
// tokens are, so a token that is not typed at+jwt is refused when it has one.
func idTokenMarks(claims map[string]any) bool {
	for _, c := range []string{"nonce", "at_hash", "c_hash"} {
		if _, ok := claims[c]; ok {
			return true
		}
	}
	return false
}
