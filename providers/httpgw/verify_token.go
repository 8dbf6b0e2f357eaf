package httpgw

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"

	"switchboard/engine"
)

// pathTokenVerifier checks the token segment of /v1/provider-callbacks/{provider}/{token}.
type pathTokenVerifier struct {
	want [sha256.Size]byte
}

func newPathTokenVerifier(cfg VerifierConfig, _ engine.Clock) (Verifier, error) {
	if cfg.Token == "" {
		return nil, errors.New("token is empty")
	}
	return &pathTokenVerifier{want: sha256.Sum256([]byte(cfg.Token))}, nil
}

// Verify compares the route token with the configured one. Both are hashed first so that the
// comparison takes the same time whatever the lengths.
func (v *pathTokenVerifier) Verify(_ *http.Request, token string, _ []byte) error {
	got := sha256.Sum256([]byte(token))
	if token == "" || subtle.ConstantTimeCompare(got[:], v.want[:]) != 1 {
		return fmt.Errorf("%w: path token mismatch", errUnverified)
	}
	return nil
}
