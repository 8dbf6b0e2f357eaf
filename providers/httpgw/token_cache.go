package httpgw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"switchboard/engine"
)

// tokenFetch asks a token endpoint for a bearer token and says how long it lives.
type tokenFetch func(ctx context.Context) (token string, lifetime time.Duration, err error)

// refusalHold is how long a refused grant (grantRefused) answers every sender without asking
// the token endpoint again: a wrong key fails each send at once, and the endpoint is asked once
// in that time, not once per message.
const refusalHold = 30 * time.Second

// tokenCache holds the bearer token of a credential that exchanges something for one
// (oauth2-client-credentials, google-service-account) and caches the current token until
// shortly before it expires, by the provider's clock: a fifth of its lifetime early, at most
// one minute early. Concurrent callers that find no valid token share one fetch (single
// flight); the fetch runs detached from the first caller's cancellation so that others are not
// failed by it, and each caller still stops waiting when its own context ends. A refused grant
// is answered for refusalHold without another fetch.
type tokenCache struct {
	fetch   tokenFetch
	clock   engine.Clock
	timeout time.Duration
	// wholeLifetime uses each token until its lifetime ends, not shortly before (a token made
	// here rather than fetched has no clock skew or transit to allow for).
	wholeLifetime bool

	mu      sync.Mutex
	token   string
	refresh time.Time // when the cached token stops being used
	call    *tokenCall
	// refused is the last refused grant, answered until refusedUntil.
	refused      error
	refusedUntil time.Time
}

// tokenCall is one fetch in flight; done closes when token and err are set.
type tokenCall struct {
	done  chan struct{}
	token string
	err   error
}

func newTokenCache(fetch tokenFetch, clock engine.Clock, timeout time.Duration) *tokenCache {
	return &tokenCache{fetch: fetch, clock: clock, timeout: timeout}
}

func (c *tokenCache) ownedHeaders() []string { return []string{"authorization"} }

func (c *tokenCache) apply(ctx context.Context, h http.Header) (string, error) {
	token, err := c.get(ctx)
	if err != nil {
		return "", err
	}
	h.Set("Authorization", "Bearer "+token)
	return token, nil
}

// rejected forgets the cached token if it is the one the gateway refused.
func (c *tokenCache) rejected(used string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token == used {
		c.token = ""
	}
}

// get returns a valid token, fetching one when needed.
func (c *tokenCache) get(ctx context.Context) (string, error) {
	c.mu.Lock()
	now := c.clock.Now()
	if c.token != "" && now.Before(c.refresh) {
		token := c.token
		c.mu.Unlock()
		return token, nil
	}
	if c.refused != nil && now.Before(c.refusedUntil) {
		err := c.refused
		c.mu.Unlock()
		return "", err
	}
	call := c.call
	if call == nil {
		call = &tokenCall{done: make(chan struct{})}
		c.call = call
		go c.fetchInto(context.WithoutCancel(ctx), call)
	}
	c.mu.Unlock()
	select {
	case <-call.done:
		return call.token, call.err
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for a token: %w", ctx.Err())
	}
}

// fetchInto runs one fetch, caches its result and releases the waiters.
func (c *tokenCache) fetchInto(ctx context.Context, call *tokenCall) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	token, lifetime, err := c.fetch(ctx)
	c.mu.Lock()
	var refused *grantRefused
	switch {
	case err == nil:
		margin := min(lifetime/5, time.Minute)
		if c.wholeLifetime {
			margin = 0
		}
		c.token, c.refresh = token, c.clock.Now().Add(lifetime-margin)
		c.refused = nil
	case errors.As(err, &refused):
		c.refused, c.refusedUntil = err, c.clock.Now().Add(refusalHold)
	}
	c.call = nil
	c.mu.Unlock()
	call.token, call.err = token, err
	close(call.done)
}
