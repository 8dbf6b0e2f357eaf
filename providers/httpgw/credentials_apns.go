package httpgw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
// Its tokenCache makes one on first use and again once it is 50 minutes old by the provider's
// clock (a token made here has no clock skew to allow for, so it is used for its whole
// lifetime), or when the gateway refused the one in use (rejected); concurrent senders share
// each token.
type apnsCredential struct {
	*tokenCache
	signer jose.Signer
	teamID string
}

func newAPNsCredential(auth Auth, clock engine.Clock, timeout time.Duration) (*apnsCredential, error) {
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
	c := &apnsCredential{signer: signer, teamID: auth.TeamID}
	c.tokenCache = newTokenCache(c.sign, clock, timeout)
	c.wholeLifetime = true
	return c, nil
}

// apply sets the provider token with the scheme as Apple writes it.
func (c *apnsCredential) apply(ctx context.Context, h http.Header) (string, error) {
	token, err := c.get(ctx)
	if err != nil {
		return "", err
	}
	h.Set("Authorization", "bearer "+token)
	return token, nil
}

// sign makes a provider token dated by the provider's clock.
func (c *apnsCredential) sign(context.Context) (string, time.Duration, error) {
	token, err := jwt.Signed(c.signer).Claims(map[string]any{"iss": c.teamID, "iat": c.clock.Now().Unix()}).Serialize()
	if err != nil {
		return "", 0, fmt.Errorf("apns-token: sign the provider token: %w", err)
	}
	return token, apnsTokenLifetime, nil
}
