package auth

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults of Config.
const (
	// DefaultScopeClaim is the claim holding the token's scopes (RFC 9068).
	DefaultScopeClaim = "scope"
	// DefaultClientClaim is the claim holding the OAuth client id (RFC 9068).
	DefaultClientClaim = "client_id"
	// DefaultLeeway is the clock skew tolerated between the issuer and this process, applied to
	// exp, nbf and iat alike.
	DefaultLeeway = 30 * time.Second
	// MaxLeeway bounds Config.Leeway: a larger skew is a broken clock, not a tolerance.
	MaxLeeway = 5 * time.Minute
	// jwksHTTPTimeout is the timeout of the default JWKS client and of every fetch.
	jwksHTTPTimeout = 5 * time.Second
)

// Config is the verifier's view of the runtime file's `authentication` section.
type Config struct {
	// Issuer must equal the token's iss exactly. Required.
	Issuer string
	// Audience must be one of the token's aud values. Required.
	Audience string
	// JWKSURI is where the issuer publishes its JWK Set: https, or http on a loopback address
	// (127.0.0.0/8, ::1 or localhost). Exactly one of JWKSURI and JWKSFile is required.
	JWKSURI string
	// JWKSFile is a JWK Set document on disk, read once by NewVerifier and never re-read:
	// rotating its keys needs a restart.
	JWKSFile string
	// AllowedClients lists the OAuth client ids whose tokens are accepted. Required, non-empty.
	AllowedClients []string
	// ScopeClaim names the scope claim, a space-separated string or an array of strings.
	// Empty means DefaultScopeClaim.
	ScopeClaim string
	// ClientClaim names the client id claim. Empty means DefaultClientClaim.
	ClientClaim string
	// HTTPClient fetches JWKSURI. Nil means a client with a 5 s timeout.
	HTTPClient *http.Client
	// Leeway is the tolerated clock skew; zero means DefaultLeeway, at most MaxLeeway.
	Leeway time.Duration
	// TokenTypes lists the token types accepted (see ParseTokenType): TokenTypeAccess,
	// TokenTypeJWT, TokenTypeUntyped. Empty means TokenTypeAccess only. Whatever the type, the
	// claims are checked alike; a token not typed at+jwt is also refused when it carries an ID
	// token's marks, and the audience may then not be one of AllowedClients (an ID token's aud is
	// its client).
	TokenTypes []string
}

// withDefaults returns the configuration with empty members defaulted and validates it.
func (c Config) withDefaults() (Config, error) {
	var errs []error
	if strings.TrimSpace(c.Issuer) == "" {
		errs = append(errs, errors.New("issuer is required"))
	}
	if strings.TrimSpace(c.Audience) == "" {
		errs = append(errs, errors.New("audience is required"))
	}
	switch {
	case c.JWKSURI == "" && c.JWKSFile == "":
		errs = append(errs, errors.New("one of jwksUri and jwksFile is required"))
	case c.JWKSURI != "" && c.JWKSFile != "":
		errs = append(errs, errors.New("jwksUri and jwksFile are exclusive"))
	case c.JWKSURI != "":
		if err := checkJWKSURI(c.JWKSURI); err != nil {
			errs = append(errs, err)
		}
	}
	if len(c.AllowedClients) == 0 {
		errs = append(errs, errors.New("allowedClients must name at least one client"))
	}
	for _, id := range c.AllowedClients {
		if id == "" {
			errs = append(errs, errors.New("allowedClients holds an empty client id"))
			break
		}
	}
	types, err := c.tokenTypes()
	if err != nil {
		errs = append(errs, err)
	}
	if c.Leeway < 0 || c.Leeway > MaxLeeway {
		errs = append(errs, fmt.Errorf("leeway must be between 0 and %s", MaxLeeway))
	}
	if len(errs) > 0 {
		return c, fmt.Errorf("auth: invalid configuration: %w", errors.Join(errs...))
	}
	c.TokenTypes = types
	if c.ScopeClaim == "" {
		c.ScopeClaim = DefaultScopeClaim
	}
	if c.ClientClaim == "" {
		c.ClientClaim = DefaultClientClaim
	}
	if c.Leeway == 0 {
		c.Leeway = DefaultLeeway
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{Timeout: jwksHTTPTimeout, CheckRedirect: checkJWKSRedirect}
	}
	return c, nil
}

// tokenTypes returns TokenTypes in canonical form (TokenTypeAccess alone when empty), refusing an
// unknown type, and an audience that is also an allowed client when a type other than at+jwt
// is accepted: an ID token of that client would then pass the audience check.
func (c Config) tokenTypes() ([]string, error) {
	if len(c.TokenTypes) == 0 {
		return []string{TokenTypeAccess}, nil
	}
	out := make([]string, 0, len(c.TokenTypes))
	plain := false
	for _, s := range c.TokenTypes {
		t, ok := ParseTokenType(s)
		if !ok {
			return nil, fmt.Errorf("tokenTypes holds a type that is not %s, %s or %s", TokenTypeAccess, TokenTypeJWT, TokenTypeUntyped)
		}
		plain = plain || t != TokenTypeAccess
		out = append(out, t)
	}
	if plain {
		for _, id := range c.AllowedClients {
			if id == c.Audience {
				return nil, errors.New("audience must not be an allowed client when tokenTypes accepts tokens not typed at+jwt")
			}
		}
	}
	return out, nil
}

// checkJWKSURI accepts https URLs, and http URLs whose host is a loopback address.
func checkJWKSURI(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("jwksUri is not a URL: %w", err)
	}
	if u.Host == "" || u.User != nil {
		return errors.New("jwksUri must be an absolute URL without credentials")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if isLoopbackHost(u.Hostname()) {
			return nil
		}
		return errors.New("jwksUri must use https (plain http is allowed on loopback addresses only)")
	}
	return errors.New("jwksUri must use https")
}

// checkJWKSRedirect holds redirects of the default client to the rule of jwksUri itself, so that
// an https endpoint cannot send us to plain http elsewhere.
func checkJWKSRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 5 {
		return errors.New("too many redirects")
	}
	return checkJWKSURI(req.URL.String())
}

func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
