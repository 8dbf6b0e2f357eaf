package api

import (
	"errors"
	"net/http"

	"switchboard/engine"
	"switchboard/engine/auth"
)

// authed wraps a handler with authentication, the access profile check, the role check and the
// per-caller rate limit. roles nil means any role.
func (s *Server) authed(roles []string, h func(http.ResponseWriter, *http.Request, engine.Caller)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		caller, err := s.authenticate(r)
		if err != nil {
			if engine.CodeOf(err) == engine.CodeAuthenticationRefused {
				w.Header().Set("WWW-Authenticate", auth.WWWAuthenticate(err))
			}
			s.writeProblem(w, r, err)
			return
		}
		if roles != nil && !hasRole(roles, caller.Role) {
			s.writeProblem(w, r, engine.NewProblem(engine.CodeOperationNotAuthz, "the caller's access profile may not do this"))
			return
		}
		h(w, r, caller)
	}
}

func hasRole(roles []string, role string) bool {
	for _, r := range roles {
		if r == role {
			return true
		}
	}
	return false
}

// authenticate resolves the caller: token, access profile, scopes, rate limit.
func (s *Server) authenticate(r *http.Request) (engine.Caller, error) {
	if s.cfg.Auth == nil {
		return engine.Caller{}, engine.NewProblem(engine.CodeAuthenticationRefused, "authentication is not configured")
	}
	p, err := s.cfg.Auth.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		var prob *engine.Problem
		if !errors.As(err, &prob) {
			return engine.Caller{}, &engine.Problem{Code: engine.CodeAuthenticationRefused, Detail: "the access token was refused", Err: err}
		}
		return engine.Caller{}, err
	}
	profile, err := auth.Authorize(s.cfg.Package, p)
	if err != nil {
		return engine.Caller{}, err
	}
	callerKey := auth.CallerKey(p.Issuer, p.Subject)
	caller := engine.Caller{
		Issuer: p.Issuer, Subject: p.Subject, Profile: profile.ID, Role: profile.Role,
		Pseudonym: s.pseudonyms.caller(callerKey),
	}
	if s.cfg.Limiter != nil {
		if err := s.cfg.Limiter.Allow(callerKey, profile); err != nil {
			return engine.Caller{}, err
		}
	}
	return caller, nil
}
