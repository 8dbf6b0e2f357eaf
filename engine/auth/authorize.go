package auth

import (
	"switchboard/engine"
	"switchboard/packages"
)

// Authorize returns the access profile of the caller's client (a client belongs to exactly one
// profile) after checking that the token grants every scope the profile requires.
//
// A client that no profile names is refused with authentication.refused (the client is not
// configured for this package); a missing scope with operation.not-authorized. What the profile
// then allows (sender profiles, templates, direct content, role) is the caller's to check.
func Authorize(pkg *packages.Package, p *Principal) (*packages.AccessProfile, error) {
	if pkg == nil {
		return nil, &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "no package is loaded"}
	}
	if p == nil {
		return nil, refused(detailMissing, errNoCredentials)
	}
	profile := pkg.ProfileForClient(p.ClientID)
	if profile == nil {
		return nil, refused(detailNoProfile, nil)
	}
	for _, s := range profile.RequiredScopes {
		if !p.HasScope(s) {
			return nil, engine.NewProblem(engine.CodeOperationNotAuthz, detailMissingScope)
		}
	}
	return profile, nil
}
