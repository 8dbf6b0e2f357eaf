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
	"time"

	"switchboard/engine"
)

// oauth2DefaultLifetime is assumed when a token answer carries no expires_in.
const oauth2DefaultLifetime = 5 * time.Minute

// oauth2Source fetches client-credentials tokens (RFC 6749 section 4.4), cached by its
// tokenCache.
type oauth2Source struct {
	*tokenCache
	auth   Auth
	client *http.Client
}

func newOAuth2Source(auth Auth, client *http.Client, clock engine.Clock, timeout time.Duration) (*oauth2Source, error) {
	u, err := url.Parse(auth.TokenURL)
	if err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))) || u.Host == "" {
		return nil, errors.New("oauth2-client-credentials: tokenUrl must be https (or http on loopback)")
	}
	if auth.ClientID == "" || auth.ClientSecret == "" {
		return nil, errors.New("oauth2-client-credentials: client id or secret is empty")
	}
	s := &oauth2Source{auth: auth, client: client}
	s.tokenCache = newTokenCache(s.fetch, clock, timeout)
	return s, nil
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
