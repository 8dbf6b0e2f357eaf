package api

import (
	"net/http"
	"net/netip"
	"strings"
)

// Behind a reverse proxy (docs/operations.md, "Behind a reverse proxy"). The socket's peer of
// a request is the proxy, not the client; the proxy names the client in X-Forwarded-For and the
// host and scheme the browser used in X-Forwarded-Host and X-Forwarded-Proto. Anyone can send
// those headers, so they are believed only from peers the runtime lists as trusted proxies
// (listen.trustedProxies); from any other peer they are ignored.

// Proxies are the peers whose forwarding headers the API believes.
type Proxies []netip.Prefix

// trusts reports whether a is within one of the blocks.
func (p Proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, block := range p {
		if block.Contains(a) {
			return true
		}
	}
	return false
}

// peer is the address of the socket's peer of r; ok is false when RemoteAddr holds none (a
// request built by a test without a connection).
func peer(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

// fromTrusted reports whether r's peer is a trusted proxy.
func (p Proxies) fromTrusted(r *http.Request) bool {
	if len(p) == 0 {
		return false
	}
	a, ok := peer(r)
	return ok && p.trusts(a)
}

// ClientAddr is the address of the client that sent r: the socket's peer, unless that peer is
// a trusted proxy; then the nearest address of X-Forwarded-For (read from the right, where each
// proxy appends the peer it saw) that is not itself a trusted proxy. An entry that is no address
// ends the walk at the last address before it, so a client can never name itself through a
// proxy it does not sit behind.
func (p Proxies) ClientAddr(r *http.Request) string {
	a, ok := peer(r)
	if !ok {
		return r.RemoteAddr
	}
	if !p.trusts(a) {
		return a.String()
	}
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		entries := strings.Split(hops[i], ",")
		for j := len(entries) - 1; j >= 0; j-- {
			hop, ok := parseHop(entries[j])
			if !ok {
				return a.String()
			}
			a = hop
			if !p.trusts(a) {
				return a.String()
			}
		}
	}
	return a.String()
}

// parseHop reads one entry of X-Forwarded-For: an address, with or without a port.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return a.Unmap(), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil && ap.Addr().Zone() == "" {
		return ap.Addr().Unmap(), true
	}
	return netip.Addr{}, false
}

// forwardedOrigin is the scheme and host the client used, as a trusted proxy names them in
// X-Forwarded-Proto and X-Forwarded-Host (the first, client-side value of each); ok is false
// when r's peer is not trusted or names no host. scheme is "" when the proxy names none.
func (p Proxies) forwardedOrigin(r *http.Request) (scheme, host string, ok bool) {
	if !p.fromTrusted(r) {
		return "", "", false
	}
	first := func(name string) string {
		v, _, _ := strings.Cut(r.Header.Get(name), ",")
		return strings.TrimSpace(v)
	}
	host = first("X-Forwarded-Host")
	return strings.ToLower(first("X-Forwarded-Proto")), host, host != ""
}
