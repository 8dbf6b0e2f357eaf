package runtime

import (
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"

	"switchboard/engine/adapterparam"
)

// Bounds of an http provider's parameters (docs/runtime.md).
const (
	maxParameters     = adapterparam.MaxEntries
	maxParameterChars = adapterparam.MaxChars
)

// decodePublicURL reads the top-level publicUrl: the externally reachable base URL of the API
// listener, from which each provider's callback URL is made. It is https, or http towards a
// loopback host, without user information, query or fragment; "" when absent.
func (r *reader) decodePublicURL(doc *mapping) *url.URL {
	text, _, _, ok := doc.scalar("publicUrl")
	if !ok {
		return nil
	}
	u, reason := parseRemoteURL(text)
	switch {
	case reason != "":
		doc.fail("publicUrl", "%s", reason)
		return nil
	case u.RawQuery != "" || u.ForceQuery:
		doc.fail("publicUrl", "must not carry a query")
		return nil
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u
}

// decodeParameters reads an http provider's parameters: at most 32 entries, names identifiers
// (a letter, then letters, digits or _), values strings of at most 256 characters. They reach
// the adapter, so they must never be secrets: a secret: reference is refused.
func (r *reader) decodeParameters(m *mapping) map[string]string {
	out := map[string]string{}
	if !m.has("parameters") {
		return out
	}
	mem, line := m.at("parameters")
	n := deref(m.vals["parameters"])
	if n.Kind != yaml.MappingNode {
		r.diags.add(CodeInvalid, n.Line, mem, "must be a mapping of names to short strings")
		return out
	}
	pm := r.open(n, mem, line, nil)
	if len(pm.keys) > maxParameters {
		r.diags.add(CodeInvalid, n.Line, mem, "holds %d entries; at most %d are allowed", len(pm.keys), maxParameters)
		return out
	}
	for _, name := range pm.keys {
		if !adapterparam.ValidName(name) {
			pm.fail(name, "parameter names are a letter, then up to 63 letters, digits or _ (profile.parameters.NAME)")
			continue
		}
		value, node, _, ok := pm.scalar(name)
		if !ok {
			if node == nil && !pm.has(name) {
				pm.fail(name, "must be a string")
			}
			continue
		}
		switch {
		case strings.HasPrefix(strings.TrimSpace(value), "secret:"):
			pm.fail(name, "parameters reach the adapter script and must never hold secrets; "+
				"a credential belongs in authentication (or a callbackVerifier) as a …Ref")
		case !adapterparam.ValidValue(value):
			pm.fail(name, "must be text of at most %d characters", maxParameterChars)
		default:
			out[name] = value
		}
	}
	return out
}

// CallbackURL is the full public URL of a provider's callback route, made from publicUrl:
// …/v1/provider-callbacks/{provider}, with /{token} for a path-token verifier. It is "" without
// publicUrl or for a provider the runtime does not connect over http.
func (r *Runtime) CallbackURL(providerID string) string {
	if r.PublicURL == nil {
		return ""
	}
	p := r.Providers[providerID]
	if p == nil || p.HTTP == nil {
		return ""
	}
	u := *r.PublicURL
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/provider-callbacks/" + providerID
	u.RawPath = ""
	if v := p.HTTP.CallbackVerifier; v != nil && v.Kind == VerifierPathToken {
		u.Path += "/" + string(v.Token.value)
	}
	return u.String()
}
