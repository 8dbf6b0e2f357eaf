package httpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"switchboard/engine"
)

// oauth2DefaultLifetime is assumed when a token answer carries no expires_in.
const oauth2DefaultLifetime = 5 * time.Minute

// oauth2Source fetches client-credentials tokens (RFC 6749 section 4.4) and caches the current
// one until shortly before it expires: a fifth of its lifetime early, at most one minute early.
// Concurrent callers that find no valid token share one fetch (single flight); the fetch runs
// detached from the first caller's cancellation so that others are not failed by it.
type oauth2Source struct {
	auth    Auth
	client  *http.Client
	clock   engine.Clock
	timeout time.Duration

	mu      sync.Mutex
	token   string
	refresh time.Time // when the cached token stops being used
	call    *tokenCall
}

// tokenCall is one fetch in flight; done closes when token and err are set.
type tokenCall struct {
	done  chan struct{}
	token string
	err   error
}

func newOAuth2Source(auth Auth, client *http.Client, clock engine.Clock, timeout time.Duration) (*oauth2Source, error) {
	u, err := url.Parse(auth.TokenURL)
	if err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))) || u.Host == "" {
		return nil, errors.New("oauth2-client-credentials: tokenUrl must be https (or http on loopback)")
	}
	if auth.ClientID == "" || auth.ClientSecret == "" {
		return nil, errors.New("oauth2-client-credentials: client id or secret is empty")
	}
	return &oauth2Source{auth: auth, client: client, clock: clock, timeout: timeout}, nil
}

func (s *oauth2Source) ownedHeaders() []string { return []string{"authorization"} }

func (s *oauth2Source) apply(ctx context.Context, h http.Header) (string, error) {
	token, err := s.get(ctx)
	if err != nil {
		return "", err
	}
	h.Set("Authorization", "Bearer "+token)
	return token, nil
}

// rejected forgets the cached token if it is the one the gateway refused.
func (s *oauth2Source) rejected(used string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.token == used {
		s.token = ""
	}
}

// get returns a valid token, fetching one when needed.
func (s *oauth2Source) get(ctx context.Context) (string, error) {
	s.mu.Lock()
	if s.token != "" && s.clock.Now().Before(s.refresh) {
		token := s.token
		s.mu.Unlock()
		return token, nil
	}
	call := s.call
	if call == nil {
		call = &tokenCall{done: make(chan struct{})}
		s.call = call
		go s.fetchInto(context.WithoutCancel(ctx), call)
	}
	s.mu.Unlock()
	select {
	case <-call.done:
		return call.token, call.err
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for oauth2 token: %w", ctx.Err())
	}
}

// fetchInto runs one fetch, caches its result and releases the waiters.
func (s *oauth2Source) fetchInto(ctx context.Context, call *tokenCall) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	token, lifetime, err := s.fetch(ctx)
	s.mu.Lock()
	if err == nil {
		margin := min(lifetime/5, time.Minute)
		s.token, s.refresh = token, s.clock.Now().Add(lifetime-margin)
	}
	s.call = nil
	s.mu.Unlock()
	call.token, call.err = token, err
	close(call.done)
}

// tokenAnswer is the JSON of a successful token response (RFC 6749 section 5.1).
type tokenAnswer struct {
	AccessToken string   `json:"access_token"`
	TokenType   string   `json:"token_type"`
	ExpiresIn   *float64 `json:"expires_in"`
}

// fetch asks the token endpoint for a token; the client credentials go in basic auth, each
// form-encoded first as RFC 6749 section 2.3.1 says.
func (s *oauth2Source) fetch(ctx context.Context) (string, time.Duration, error) {
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(s.auth.Scopes) > 0 {
		form.Set("scope", strings.Join(s.auth.Scopes, " "))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.auth.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, fmt.Errorf("oauth2 token request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(s.auth.ClientID), url.QueryEscape(s.auth.ClientSecret))
	resp, err := s.client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("oauth2 token request: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", 0, fmt.Errorf("oauth2 token answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", 0, fmt.Errorf("oauth2 token endpoint answered %d", resp.StatusCode)
	}
	var answer tokenAnswer
	if err := json.Unmarshal(body, &answer); err != nil {
		return "", 0, fmt.Errorf("oauth2 token answer: %w", err)
	}
	if answer.AccessToken == "" || !validHeaderValue(answer.AccessToken) {
		return "", 0, errors.New("oauth2 token answer: access_token is missing or malformed")
	}
	if answer.TokenType != "" && !strings.EqualFold(answer.TokenType, "bearer") {
		return "", 0, fmt.Errorf("oauth2 token answer: token_type %q is not bearer", answer.TokenType)
	}
	lifetime := oauth2DefaultLifetime
	if answer.ExpiresIn != nil && *answer.ExpiresIn > 0 {
		lifetime = time.Duration(min(*answer.ExpiresIn, 366*24*3600) * float64(time.Second))
	}
	return answer.AccessToken, lifetime, nil
}
