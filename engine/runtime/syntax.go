package runtime

import (
	"net"
	"net/url"
	"strings"
)

// isIdentifier reports whether s is a Switchboard identifier: 1 to 64 characters of
// [a-z0-9-], not starting or ending with "-" (docs/package.md, "Layout").
func isIdentifier(s string) bool {
	if s == "" || len(s) > 64 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// isHostname reports whether s is a DNS name: dot-separated labels of letters, digits and
// hyphens (underscores allowed, as in DKIM selectors), at most 253 bytes.
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '-' && c != '_' {
				return false
			}
		}
	}
	return true
}

// isLoopbackHost reports whether host (without port or brackets) is "localhost" or a
// loopback IP address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// parseRemoteURL parses an absolute URL the process will call: https, or http only towards a
// loopback host; no user information, no fragment. It returns a reason (never holding the
// value) when the URL is refused.
func parseRemoteURL(s string) (*url.URL, string) {
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Hostname() == "" {
		return nil, "must be an absolute http or https URL with a host"
	}
	switch {
	case u.User != nil:
		return nil, "must not carry user information; use authentication instead"
	case u.Fragment != "" || strings.Contains(s, "#"):
		return nil, "must not carry a fragment"
	case u.Scheme == "https":
	case u.Scheme == "http":
		if !isLoopbackHost(u.Hostname()) {
			return nil, "must be https; plain http is allowed only towards a loopback host"
		}
	default:
		return nil, "must be an https URL (or http towards a loopback host)"
	}
	return u, ""
}

// isToken reports whether s is an HTTP token (RFC 9110), as header names and auth schemes are.
func isToken(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// reservedHeaders are request headers the HTTP client owns; a credential may not replace them.
var reservedHeaders = []string{"host", "content-length", "transfer-encoding", "connection",
	"keep-alive", "te", "trailer", "upgrade", "proxy-authorization", "content-type"}

// isPrintableText reports whether b is visible ASCII, spaces and tabs, not starting or ending
// with white space: what can go unchanged into an HTTP header value.
func isPrintableText(b []byte) bool {
	if len(b) == 0 || b[0] == ' ' || b[0] == '\t' || b[len(b)-1] == ' ' || b[len(b)-1] == '\t' {
		return false
	}
	for _, c := range b {
		if (c < 0x20 && c != '\t') || c >= 0x7f {
			return false
		}
	}
	return true
}

// isURLPathToken reports whether b is made of URL unreserved characters only, so that it can
// be one path segment unchanged.
func isURLPathToken(b []byte) bool {
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.', c == '_', c == '~':
		default:
			return false
		}
	}
	return len(b) > 0
}

// isMultiaddr is a light syntax check of a libp2p multiaddr: it starts with "/", has no empty
// component and no white space. providers/peer parses it for real.
func isMultiaddr(s string) bool {
	if len(s) < 2 || len(s) > 1024 || s[0] != '/' || strings.HasSuffix(s, "/") {
		return false
	}
	for _, part := range strings.Split(s[1:], "/") {
		if part == "" {
			return false
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// isPeerID is a light syntax check of a libp2p peer id (base58btc multihash or a base32 CID):
// 32 to 128 letters and digits.
func isPeerID(s string) bool {
	if len(s) < 32 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
