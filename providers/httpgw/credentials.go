package httpgw

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"switchboard/engine"
)

// CodeTokenUnavailable is the transient code of a send whose OAuth 2.0 token could not be had.
const CodeTokenUnavailable = "auth.token-unavailable"

// credential adds the provider's authentication to a request. Scripts never see it.
type credential interface {
	// apply sets the credential on h; it returns the secret it used (for rejected).
	apply(ctx context.Context, h http.Header) (string, error)
	// rejected is told that the gateway answered 401 to a request that carried used.
	rejected(used string)
	// ownedHeaders are the headers the credential sets, lower case, which prepare may never set.
	ownedHeaders() []string
}

// newCredential builds the credential of auth. Kind none is allowed only for a loopback base.
func newCredential(auth Auth, base *url.URL, client *http.Client, clock engine.Clock, timeout time.Duration) (credential, error) {
	switch auth.Kind {
	case "", AuthNone:
		if !isLoopbackHost(base.Hostname()) {
			return nil, errors.New("authentication none is allowed only for a loopback baseUrl")
		}
		return staticCredential{}, nil
	case AuthBasic:
		if auth.Username == "" {
			return nil, errors.New("basic: username is empty")
		}
		raw := base64.StdEncoding.EncodeToString([]byte(auth.Username + ":" + auth.Password))
		return staticCredential{header: "Authorization", value: "Basic " + raw}, nil
	case AuthStaticAuthorization:
		scheme := auth.Scheme
		if scheme == "" {
			scheme = "Bearer"
		}
		if auth.Token == "" || !validHeaderName(scheme) || !validHeaderValue(auth.Token) {
			return nil, errors.New("static-authorization: scheme or token is empty or malformed")
		}
		return staticCredential{header: "Authorization", value: scheme + " " + auth.Token}, nil
	case AuthStaticAPIKey:
		if !validHeaderName(auth.Header) || auth.Token == "" || !validHeaderValue(auth.Token) {
			return nil, errors.New("static-api-key: header or token is empty or malformed")
		}
		return staticCredential{header: http.CanonicalHeaderKey(auth.Header), value: auth.Token}, nil
	case AuthOAuth2ClientCredential:
		return newOAuth2Source(auth, client, clock, timeout)
	case AuthAWSSigV4:
		return newSigV4Credential(auth, clock)
	case AuthPathToken:
		return newPathTokenCredential(auth, base)
	case AuthGoogleServiceAccount:
		return newServiceAccountCredential(auth, client, clock, timeout)
	case AuthAPNsToken:
		return newAPNsCredential(auth, clock, timeout)
	}
	return nil, fmt.Errorf("unknown authentication kind %q", auth.Kind)
}

// staticCredential sets one fixed header (or nothing for kind none).
type staticCredential struct {
	header, value string
}

func (c staticCredential) apply(_ context.Context, h http.Header) (string, error) {
	if c.header != "" {
		h.Set(c.header, c.value)
	}
	return c.value, nil
}

func (staticCredential) rejected(string) {}

func (c staticCredential) ownedHeaders() []string {
	if c.header == "" {
		return nil
	}
	return []string{strings.ToLower(c.header)}
}

// isLoopbackHost reports whether host is localhost or a loopback IP address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
