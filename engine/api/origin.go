package api

import (
	"net/http"
	"net/url"
	"strings"

	"switchboard/engine"
)

// Cross-site requests (docs/console.md, "Security"). The API authenticates with a bearer token
// that a script must put in the Authorization header; it reads no cookie, so a page of another
// site cannot make a browser send a request the API would act on. As a second fence, a
// state-changing request that a browser marks as coming from another origin (Sec-Fetch-Site:
// cross-site, or an Origin that is not the API's own) is refused before anything else runs.
// Provider callbacks come from gateways, not browsers, and are left to their verifiers.
//
// The API's own origin is the one the browser addressed: the request's Host, or the host and
// scheme a trusted proxy forwards (proxies.go); and, when the runtime sets publicUrl, its
// origin, since a reverse proxy in front of the API may rewrite Host without forwarding it.

// crossSite reports whether r is a state-changing request a browser sent from another origin.
func (s *Server) crossSite(r *http.Request) bool {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return false
	}
	if strings.HasPrefix(r.URL.Path, "/v1/provider-callbacks/") {
		return false
	}
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return true
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return true
	}
	scheme, host := strings.ToLower(u.Scheme), hostOf(u.Scheme, u.Host)
	if pub := s.cfg.PublicURL; pub != nil && scheme == strings.ToLower(pub.Scheme) && host == hostOf(pub.Scheme, pub.Host) {
		return false
	}
	if fscheme, fhost, ok := s.cfg.TrustedProxies.forwardedOrigin(r); ok {
		return fscheme != "" && fscheme != scheme || hostOf(scheme, fhost) != host
	}
	return hostOf(scheme, r.Host) != host
}

// hostOf is host (host[:port]) in lower case without the default port of scheme, as browsers
// write it in Origin.
func hostOf(scheme, host string) string {
	host = strings.ToLower(host)
	switch strings.ToLower(scheme) {
	case "https":
		return strings.TrimSuffix(host, ":443")
	case "http":
		return strings.TrimSuffix(host, ":80")
	}
	return host
}

// errCrossSite is the refusal of a cross-site request.
var errCrossSite = engine.NewProblem(engine.CodeOperationNotAuthz, "requests from another site are refused")
