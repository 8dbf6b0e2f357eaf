package httpgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"golang.org/x/oauth2/jwt"

	"switchboard/engine"
	"switchboard/engine/pushkey"
)

// CodeGrantRefused is the permanent code of a send whose credential's token endpoint refused
// the grant (400, 401 or 403): the key, its scopes or the account are wrong, which no retry
// mends; the reason says what the endpoint answered.
const CodeGrantRefused = "auth.grant-refused"

// grantRefused is the error of a token request the endpoint refused for good.
type grantRefused struct {
	kind   string
	status int
	detail string // the endpoint's error and error_description, printable and bounded
}

func (e *grantRefused) Error() string {
	msg := fmt.Sprintf("%s: the token endpoint refused the grant (status %d", e.kind, e.status)
	if e.detail != "" {
		msg += ": " + e.detail
	}
	return msg + "); check the key in the runtime file's secret, its scopes and that the account is enabled"
}

// serviceAccountCredential is google-service-account: Google's own packages read the JSON key
// (google.JWTConfigFromJSON), sign the RFC 7523 JWT grant and exchange it at the key's
// token_uri (jwt.Config); the tokenCache keeps the access token by the provider's clock and
// makes concurrent senders share one exchange. oauth2.ReuseTokenSource is not used for the
// caching: it dates tokens by the wall clock, which the provider's injected clock must govern,
// and holds its lock through the exchange, so a waiting sender could not give up when its own
// deadline passes.
type serviceAccountCredential struct {
	*tokenCache
	config *jwt.Config
	client *http.Client
}

func newServiceAccountCredential(auth Auth, client *http.Client, clock engine.Clock, timeout time.Duration) (*serviceAccountCredential, error) {
	if len(auth.Scopes) == 0 {
		return nil, errors.New("google-service-account: no scope")
	}
	if _, err := pushkey.CheckServiceAccount(auth.ServiceAccount); err != nil {
		return nil, fmt.Errorf("google-service-account: %w", err)
	}
	config, err := google.JWTConfigFromJSON(auth.ServiceAccount, auth.Scopes...)
	if err != nil {
		// The parser's error may quote the key; say only what is wrong with it.
		return nil, errors.New("google-service-account: the secret is not a usable service account JSON key")
	}
	c := &serviceAccountCredential{config: config, client: client}
	c.tokenCache = newTokenCache(c.fetch, clock, timeout)
	return c, nil
}

// fetch signs a fresh grant and exchanges it for an access token through the provider's client.
func (c *serviceAccountCredential) fetch(ctx context.Context) (string, time.Duration, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, c.client)
	tok, err := c.config.TokenSource(ctx).Token()
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) && re.Response != nil {
			switch s := re.Response.StatusCode; s {
			case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
				return "", 0, &grantRefused{kind: AuthGoogleServiceAccount, status: s, detail: grantErrorDetail(re.Body)}
			default:
				return "", 0, fmt.Errorf("google-service-account: the token endpoint answered %d", s)
			}
		}
		return "", 0, fmt.Errorf("google-service-account: token request: %s", withoutURL(err))
	}
	if tok.AccessToken == "" || !validHeaderValue(tok.AccessToken) {
		return "", 0, errors.New("google-service-account: token answer: access_token is missing or malformed")
	}
	if tok.TokenType != "" && !strings.EqualFold(tok.TokenType, "bearer") {
		return "", 0, fmt.Errorf("google-service-account: token answer: token_type %q is not bearer", tok.TokenType)
	}
	lifetime := oauth2DefaultLifetime
	if secs, ok := tok.Extra("expires_in").(float64); ok && secs > 0 {
		lifetime = time.Duration(min(secs, 366*24*3600) * float64(time.Second))
	}
	return tok.AccessToken, lifetime, nil
}

// grantErrorDetail is the error and error_description of an RFC 6749 error answer, cut to 200
// printable characters; "" when the body is no such answer.
func grantErrorDetail(body []byte) string {
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error == "" {
		return ""
	}
	detail := e.Error
	if e.Description != "" {
		detail += ": " + e.Description
	}
	detail = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, detail)
	if len(detail) > 200 {
		detail = detail[:200]
	}
	return detail
}
