package httpgw

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"

	"switchboard/engine"
)

// basicVerifier checks HTTP Basic credentials on the callback (the gateway calls
// https://user:password@host/… or sends Authorization: Basic). Both the user name and the
// password are hashed before the constant-time comparison, so that neither length nor content
// leaks through timing, and both are always compared (no early exit on the user name).
type basicVerifier struct {
	user, pass [sha256.Size]byte
}

func newBasicVerifier(cfg VerifierConfig, _ engine.Clock) (Verifier, error) {
	if cfg.Username == "" || cfg.Password == "" {
		return nil, errors.New("username and password must both be set")
	}
	return &basicVerifier{user: sha256.Sum256([]byte(cfg.Username)), pass: sha256.Sum256([]byte(cfg.Password))}, nil
}

// Verify compares the request's Basic credentials with the configured ones.
func (v *basicVerifier) Verify(r *http.Request, _ string, _ []byte) error {
	if len(r.Header.Values("Authorization")) != 1 {
		return fmt.Errorf("%w: want exactly one Authorization header", errUnverified)
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return fmt.Errorf("%w: Authorization is not Basic credentials", errUnverified)
	}
	u, p := sha256.Sum256([]byte(user)), sha256.Sum256([]byte(pass))
	userOK := subtle.ConstantTimeCompare(u[:], v.user[:])
	passOK := subtle.ConstantTimeCompare(p[:], v.pass[:])
	if userOK&passOK != 1 {
		return fmt.Errorf("%w: credentials mismatch", errUnverified)
	}
	return nil
}
