package runtime

import (
	"encoding/json"
	"slices"

	"go.yaml.in/yaml/v3"

	"switchboard/engine/auth"
)

// maxJWKSFileBytes bounds a JWKS document on disk.
const maxJWKSFileBytes = 1 << 20

// decodeAuthentication reads `authentication`.
func (r *reader) decodeAuthentication(doc *mapping) Authentication {
	if !doc.has("authentication") {
		doc.fail("authentication", "is required")
		return Authentication{}
	}
	m := doc.child("authentication", "oidc", "scopeClaim", "clientClaim")
	a := Authentication{ScopeClaim: DefaultScopeClaim, ClientClaim: DefaultClientClaim}
	if s := m.str("scopeClaim"); s != "" {
		a.ScopeClaim = s
	}
	if s := m.str("clientClaim"); s != "" {
		a.ClientClaim = s
	}
	if !m.has("oidc") {
		m.fail("oidc", "is required")
		return a
	}
	o := m.child("oidc", "issuer", "audience", "jwksUri", "jwksFile", "allowedClients", "tokenTypes")
	a.OIDC.Issuer = o.required("issuer")
	a.OIDC.Audience = o.required("audience")
	switch {
	case o.has("jwksUri") && o.has("jwksFile"):
		o.fail("jwksFile", "jwksUri and jwksFile exclude each other")
	case o.has("jwksUri"):
		if text := o.required("jwksUri"); text != "" {
			if u, reason := parseRemoteURL(text); reason != "" {
				o.fail("jwksUri", "%s", reason)
			} else {
				a.OIDC.JWKSURI = u.String()
			}
		}
	case o.has("jwksFile"):
		if path, data := r.readFile(o, "jwksFile", maxJWKSFileBytes); data != nil {
			var set struct {
				Keys []json.RawMessage `json:"keys"`
			}
			if err := json.Unmarshal(data, &set); err != nil || len(set.Keys) == 0 {
				o.fail("jwksFile", "must be a JWKS document: a JSON object with a non-empty keys array")
			} else {
				a.OIDC.JWKSFile = path
			}
		}
	default:
		o.fail("jwksUri", "is required (or jwksFile, a JWKS document on disk)")
	}
	a.OIDC.AllowedClients = o.strings("allowedClients")
	if n := deref(o.vals["allowedClients"]); n == nil {
		o.fail("allowedClients", "is required: the OAuth client ids whose tokens are accepted")
	} else if n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		o.fail("allowedClients", "must list at least one client id")
	}
	seen := map[string]bool{}
	for _, c := range a.OIDC.AllowedClients {
		if seen[c] {
			o.fail("allowedClients", "lists a client id twice")
			break
		}
		seen[c] = true
	}
	a.OIDC.TokenTypes = decodeTokenTypes(o)
	plain := slices.ContainsFunc(a.OIDC.TokenTypes, func(t string) bool { return t != auth.TokenTypeAccess })
	if plain && seen[a.OIDC.Audience] {
		o.fail("audience", "must not be one of allowedClients when tokenTypes accepts tokens not typed at+jwt: "+
			"an ID token's audience is its client, and it would pass for an access token")
	}
	return a
}

// decodeTokenTypes reads oidc.tokenTypes: absent (nil, the default), else a non-empty list of
// at+jwt, JWT and untyped (any case, "application/" allowed), each once.
func decodeTokenTypes(o *mapping) []string {
	if !o.has("tokenTypes") {
		return nil
	}
	const known = "at+jwt, JWT (a plain JWT access token) or untyped (no typ header)"
	list := o.strings("tokenTypes")
	if n := deref(o.vals["tokenTypes"]); n != nil && n.Kind == yaml.SequenceNode && len(n.Content) == 0 {
		o.fail("tokenTypes", "must list at least one token type: %s", known)
		return nil
	}
	out := make([]string, 0, len(list))
	for _, s := range list {
		t, ok := auth.ParseTokenType(s)
		switch {
		case !ok:
			o.fail("tokenTypes", "lists a token type that is not %s", known)
		case contains(out, t):
			o.fail("tokenTypes", "lists a token type twice")
		default:
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
