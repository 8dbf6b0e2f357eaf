package httpgw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"switchboard/engine"
	"switchboard/engine/pushkey"
)

// apnsTokenLifetime is how long one APNs provider token is used: APNs refuses a token older
// than an hour (ExpiredProviderToken) and one renewed more often than every 20 minutes
// (TooManyProviderTokenUpdates).
const apnsTokenLifetime = 50 * time.Minute

// apnsCredential is apns-token: an ES256 JWT whose header names the key id and whose claims are
// the team id (iss) and the time it was made (iat), sent as "authorization: bearer <token>".
// It is made on first use and again once it is 50 minutes old by the provider's clock, or when
// the gateway refused the one in use (rejected); concurrent senders share each token.
type apnsCredential struct {
	signer jose.Signer
	teamID string
	clock  engine.Clock

	mu    sync.Mutex
	token string
	made  time.Time
}

func newAPNsCredential(auth Auth, clock engine.Clock) (*apnsCredential, error) {
	if auth.KeyID == "" || auth.TeamID == "" {
		return nil, errors.New("apns-token: key id and team id are required")
	}
	key, err := pushkey.ParseAPNsKey(auth.Key)
	if err != nil {
		return nil, fmt.Errorf("apns-token: %w", err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key},
		(&jose.SignerOptions{}).WithHeader("kid", auth.KeyID))
	if err != nil {
		return nil, fmt.Errorf("apns-token: signer: %w", err)
	}
	return &apnsCredential{signer: signer, teamID: auth.TeamID, clock: clock}, nil
}

func (c *apnsCredential) ownedHeaders() []string { return []string{"authorization"} }

func (c *apnsCredential) apply(_ context.Context, h http.Header) (string, error) {
	token, err := c.current()
	if err != nil {
		return "", err
	}
	h.Set("Authorization", "bearer "+token)
	return token, nil
}

// rejected drops the token the gateway refused (ExpiredProviderToken, InvalidProviderToken), so
// that the next send makes a new one; a token already replaced is left alone.
func (c *apnsCredential) rejected(used string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == used {
		c.token = ""
	}
}

// current returns the token in use, making a new one when there is none or it is 50 minutes
// old.
func (c *apnsCredential) current() (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	if c.token != "" && now.Sub(c.made) < apnsTokenLifetime {
		return c.token, nil
	}
	token, err := jwt.Signed(c.signer).Claims(map[string]any{"iss": c.teamID, "iat": now.Unix()}).Serialize()
	if err != nil {
		return "", fmt.Errorf("apns-token: sign the provider token: %w", err)
	}
	c.token, c.made = token, now
	return token, nil
}
