package runtime

import (
	"crypto/x509"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// providerKeys are the members of a provider connection, by kind.
var providerKeys = map[string][]string{
	KindHTTP: {"kind", "baseUrl", "timeoutMilliseconds", "maximumResponseBytes", "concurrencyLimit",
		"ratePerSecond", "authentication", "callbackVerifier", "parameters", "http2", "trustedCaFile"},
	KindSMTP: {"kind", "host", "port", "tls", "authentication", "dkim", "trustedCaFile", "timeoutMilliseconds"},
	KindPeer: {"kind", "identityKeyRef", "listen", "protocol", "pooledProtocol", "keepaliveSeconds", "idleCloseSeconds",
		"requestTimeoutSeconds", "relays", "relayService", "addressBook",
		"allowedPeers", "inboxQuota"},
}

// decodeProviders reads `providers`, a mapping from provider id to connection.
func (r *reader) decodeProviders(doc *mapping) map[string]*ProviderConfig {
	mem, line := doc.at("providers")
	m := r.open(doc.vals["providers"], mem, line, nil)
	out := make(map[string]*ProviderConfig, len(m.keys))
	for _, id := range m.keys {
		pmem, pline := m.at(id)
		if !isIdentifier(id) {
			r.diags.add(CodeInvalid, pline, pmem, "provider ids are 1 to 64 characters of a-z, 0-9 and -, not starting or ending with -")
			continue
		}
		kind, pm := r.openKind(m.vals[id], pmem, pline, providerKeys)
		if pm == nil {
			continue
		}
		p := &ProviderConfig{ID: id, Kind: kind}
		switch kind {
		case KindHTTP:
			p.HTTP = r.decodeHTTP(pm)
		case KindSMTP:
			p.SMTP = r.decodeSMTP(pm)
		case KindPeer:
			p.Peer = r.decodePeer(pm)
		}
		out[id] = p
	}
	return out
}

// openKind opens n as a mapping whose `kind` member selects its allowed keys from kinds. It
// returns a nil mapping after recording a problem (n absent, not a mapping, kind missing or
// unknown).
func (r *reader) openKind(n *yaml.Node, mem string, line int, kinds map[string][]string) (string, *mapping) {
	node := deref(n)
	if node == nil {
		r.diags.add(CodeInvalid, line, mem, "is required")
		return "", nil
	}
	if node.Kind != yaml.MappingNode {
		r.diags.add(CodeInvalid, node.Line, mem, "must be a mapping")
		return "", nil
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for i := 0; i+1 < len(node.Content); i += 2 {
		k := deref(node.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || k.Value != "kind" {
			continue
		}
		v := deref(node.Content[i+1])
		if v == nil || v.Kind != yaml.ScalarNode {
			break
		}
		kind, _, err := expand(v.Value, r.getenv)
		if err != nil {
			r.diags.add(CodeInvalid, k.Line, member(mem, "kind"), "%s", err.Error())
			return "", nil
		}
		allowed, ok := kinds[kind]
		if !ok {
			r.diags.add(CodeInvalid, k.Line, member(mem, "kind"), "must be one of %s", strings.Join(names, ", "))
			return "", nil
		}
		return kind, r.open(node, mem, line, allowed)
	}
	r.diags.add(CodeInvalid, node.Line, member(mem, "kind"), "is required: one of %s", strings.Join(names, ", "))
	return "", nil
}

// decodeHTTP reads an http provider connection.
func (r *reader) decodeHTTP(m *mapping) *HTTPProvider {
	h := &HTTPProvider{
		Timeout:              millis(m.integer("timeoutMilliseconds", 5000, 1, 600000)),
		MaximumResponseBytes: m.integer("maximumResponseBytes", 65536, 1, 64<<20),
		ConcurrencyLimit:     int(m.integer("concurrencyLimit", 0, 1, 100000)),
		RatePerSecond:        m.positiveFloat("ratePerSecond"),
	}
	h.Parameters = r.decodeParameters(m)
	h.HTTP2 = m.boolean("http2", false)
	if path, data := r.readFile(m, "trustedCaFile", maxCAFileBytes); data != nil {
		if !x509.NewCertPool().AppendCertsFromPEM(data) {
			m.fail("trustedCaFile", "holds no PEM certificate")
		} else {
			h.TrustedCAFile = path
		}
	}
	loopback := false
	if text := m.required("baseUrl"); text != "" {
		u, reason := parseRemoteURL(text)
		switch {
		case reason != "":
			m.fail("baseUrl", "%s", reason)
		case u.RawQuery != "" || u.ForceQuery:
			m.fail("baseUrl", "must not carry a query; adapters add their own")
		default:
			// Adapter targets resolve below the base, so the base must be a folder.
			if !strings.HasSuffix(u.Path, "/") {
				u.Path += "/"
				if u.RawPath != "" {
					u.RawPath += "/"
				}
			}
			h.BaseURL = u
			loopback = isLoopbackHost(u.Hostname())
		}
	}
	mem, line := m.at("authentication")
	if kind, am := r.openKind(m.vals["authentication"], mem, line, httpAuthKeys); am != nil {
		h.Authentication = r.decodeHTTPAuth(am, kind, h.BaseURL != nil, loopback)
	}
	if m.has("callbackVerifier") {
		mem, line := m.at("callbackVerifier")
		if kind, vm := r.openKind(m.vals["callbackVerifier"], mem, line, verifierKeys); vm != nil {
			h.CallbackVerifier = r.decodeVerifier(vm, kind)
		}
	}
	return h
}

// millis converts a count of milliseconds to a duration.
func millis(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
