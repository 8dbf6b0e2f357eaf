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
// state-changing request that a browser marks as coming from another origin (an Origin header
// of another host, or Sec-Fetch-Site: cross-site) is refused before anything else runs.
// Provider callbacks come from gateways, not browsers, and are left to their verifiers.

// crossSite reports whether r is a state-changing request a browser sent from another origin.
func crossSite(r *http.Request) bool {
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
	return err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host)
}

// errCrossSite is the refusal of a cross-site request.
var errCrossSite = engine.NewProblem(engine.CodeOperationNotAuthz, "requests from another site are refused")
