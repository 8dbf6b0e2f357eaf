package auth

import (
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4/jwt"
)

// checkClaims applies the claim rules to a token whose signature verified: iss equals the issuer,
// aud contains the audience, exp is present and not past, nbf and iat are not in the future (all
// three with the leeway), sub is set, and the client claim names an allowed client.
func (v *Verifier) checkClaims(std *jwt.Claims, extra map[string]any, now time.Time) (*Principal, error) {
	if std.Issuer != v.cfg.Issuer {
		return nil, refused(detailIssuer, nil)
	}
	if !std.Audience.Contains(v.cfg.Audience) {
		return nil, refused(detailAudience, nil)
	}
	if std.Expiry == nil {
		return nil, refused(detailNoExpiry, nil)
	}
	leeway := v.cfg.Leeway
	exp := std.Expiry.Time()
	if !now.Before(exp.Add(leeway)) {
		return nil, refused(detailExpired, nil)
	}
	if std.NotBefore != nil && now.Add(leeway).Before(std.NotBefore.Time()) {
		return nil, refused(detailNotYetValid, nil)
	}
	if std.IssuedAt != nil && now.Add(leeway).Before(std.IssuedAt.Time()) {
		return nil, refused(detailIssuedInFuture, nil)
	}
	if std.Subject == "" {
		return nil, refused(detailNoSubject, nil)
	}
	client, _ := extra[v.cfg.ClientClaim].(string)
	if _, ok := v.allowed[client]; !ok || client == "" {
		return nil, refused(detailClient, nil)
	}
	scopes, ok := parseScopes(extra[v.cfg.ScopeClaim])
	if !ok {
		return nil, refused(detailScopeClaim, nil)
	}
	return &Principal{
		Issuer:    std.Issuer,
		Subject:   std.Subject,
		ClientID:  client,
		Scopes:    scopes,
		ExpiresAt: exp.UTC(),
	}, nil
}

// parseScopes reads a scope claim: absent (no scopes), a space-separated string (RFC 9068, RFC
// 8693) or an array of strings. Anything else is malformed.
func parseScopes(claim any) ([]string, bool) {
	switch c := claim.(type) {
	case nil:
		return nil, true
	case string:
		return strings.Fields(c), true
	case []any:
		out := make([]string, 0, len(c))
		for _, e := range c {
			s, ok := e.(string)
			if !ok || s == "" || strings.ContainsAny(s, " \t\r\n") {
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	}
	return nil, false
}
