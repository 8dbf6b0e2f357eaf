package runtime

import (
	"errors"
	"sort"
	"strconv"

	"switchboard/packages"
)

// CheckPackage cross-checks the runtime against the package it is to serve, and returns a
// *LoadError (code runtime.invalid, exit 1) listing every mismatch:
//   - every provider the package declares has a runtime provider with the same id and kind,
//     and every runtime provider is declared by the package;
//   - every client named by an access profile is in authentication.oidc.allowedClients;
//   - package.expectedDigest, when set, equals pkg.Digest;
//   - an http provider whose adapter has receipts: callback has a callbackVerifier, and one
//     without callback receipts has none (it could never parse what it verified);
//   - an http provider's concurrencyLimit and ratePerSecond only lower the adapter's
//     capabilities;
//   - console.clientId, when the console is enabled, is a client of an operator access profile.
//
// It reads only the exported slices of pkg, so a hand-built Package works too.
func (r *Runtime) CheckPackage(pkg *packages.Package) error {
	if pkg == nil {
		return errors.New("runtime: CheckPackage needs a package")
	}
	d := &diagnostics{path: r.Path}
	at := func(mem string) int { return r.lines[mem] }
	if r.Package.ExpectedDigest != "" && r.Package.ExpectedDigest != pkg.Digest {
		d.add(CodeInvalid, at("package.expectedDigest"), "package.expectedDigest",
			"the package's digest is %s, not the pinned one", pkg.Digest)
	}
	declared := make(map[string]bool, len(pkg.Providers))
	for _, p := range pkg.Providers {
		declared[p.ID] = true
		mem := member("providers", p.ID)
		rp := r.Providers[p.ID]
		switch {
		case rp == nil:
			d.add(CodeInvalid, at("providers"), mem,
				"the package declares this %s provider; the runtime file must connect it", p.Kind)
		case rp.Kind != p.Kind:
			d.add(CodeInvalid, at(mem+".kind"), mem+".kind", "must be %s, the kind the package declares", p.Kind)
		case rp.HTTP != nil && p.Adapter != nil:
			checkHTTPAgainstAdapter(d, at, mem, rp.HTTP, p.Adapter)
		}
	}
	ids := make([]string, 0, len(r.Providers))
	for id := range r.Providers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if !declared[id] {
			mem := member("providers", id)
			d.add(CodeInvalid, at(mem), mem, "the package declares no provider with this id")
		}
	}
	allowed := make(map[string]bool, len(r.Authentication.OIDC.AllowedClients))
	for _, c := range r.Authentication.OIDC.AllowedClients {
		allowed[c] = true
	}
	const clientsMember = "authentication.oidc.allowedClients"
	for _, ap := range pkg.AccessProfiles {
		for _, c := range ap.Clients {
			if !allowed[c] {
				d.add(CodeInvalid, at(clientsMember), clientsMember,
					"must include client %s, named by access profile %s", strconv.Quote(c), ap.ID)
			}
		}
	}
	if r.Console.Enabled {
		checkConsoleClient(d, at("console.clientId"), r.Console.ClientID, pkg)
	}
	for _, w := range r.Webhooks {
		mem := member("webhooks", w.ID) + ".accessProfiles"
		for _, id := range w.AccessProfiles {
			if pkg.AccessProfile(id) == nil {
				d.add(CodeInvalid, at(mem), mem, "names access profile %s, which the package does not declare", strconv.Quote(id))
			}
		}
	}
	return d.err()
}

// checkConsoleClient checks that the console signs in as a client of an operator profile.
func checkConsoleClient(d *diagnostics, line int, client string, pkg *packages.Package) {
	const mem = "console.clientId"
	p := pkg.ProfileForClient(client)
	switch {
	case p == nil:
		d.add(CodeInvalid, line, mem, "no access profile of the package names this client")
	case p.Role != "operator":
		d.add(CodeInvalid, line, mem, "must be a client of an operator access profile; access profile %s has role %s", p.ID, p.Role)
	}
}

// checkHTTPAgainstAdapter checks one http provider's connection against its adapter.
func checkHTTPAgainstAdapter(d *diagnostics, at func(string) int, mem string, h *HTTPProvider, a *packages.Adapter) {
	callback := a.TakesCallbacks()
	switch {
	case callback && h.CallbackVerifier == nil:
		d.add(CodeInvalid, at(mem), mem+".callbackVerifier",
			"is required: the adapter takes delivery reports by callback (receipts: callback)")
	case !callback && h.CallbackVerifier != nil:
		d.add(CodeInvalid, at(mem+".callbackVerifier"), mem+".callbackVerifier",
			"the adapter takes no callbacks (receipts is not callback); remove the verifier")
	}
	if h.ConcurrencyLimit > 0 && a.ConcurrencyLimit > 0 && h.ConcurrencyLimit > a.ConcurrencyLimit {
		d.add(CodeInvalid, at(mem+".concurrencyLimit"), mem+".concurrencyLimit",
			"may only lower the adapter's concurrencyLimit of %d", a.ConcurrencyLimit)
	}
	if h.RatePerSecond > 0 && a.RatePerSecond > 0 && h.RatePerSecond > a.RatePerSecond {
		d.add(CodeInvalid, at(mem+".ratePerSecond"), mem+".ratePerSecond",
			"may only lower the adapter's ratePerSecond of %s", strconv.FormatFloat(a.RatePerSecond, 'g', -1, 64))
	}
}
