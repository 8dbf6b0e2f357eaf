package httpgw

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/engine"
)

func TestSendAddsTheCredential(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		auth       Auth
		header     string
		wantHeader string
	}{
		{"basic", Auth{Kind: AuthBasic, Username: "acct", Password: "p:w"}, "Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte("acct:p:w"))},
		{"static-authorization", Auth{Kind: AuthStaticAuthorization, Scheme: "Token", Token: "t0k"}, "Authorization", "Token t0k"},
		{"static-authorization default scheme", Auth{Kind: AuthStaticAuthorization, Token: "t0k"}, "Authorization", "Bearer t0k"},
		{"static-api-key", Auth{Kind: AuthStaticAPIKey, Header: "x-api-key", Token: "k3y"}, "X-Api-Key", "k3y"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, answerJSON(http.StatusCreated, `{"id":"r"}`))
			cfg := baseConfig(t, g.URL, quickstartAdapter)
			cfg.Auth = tc.auth
			p := newTestProvider(t, cfg)
			wantOutcome(t, p.Send(context.Background(), smsOutbound()), engine.OutcomeAccepted, "")
			if got := g.requests()[0].Header.Get(tc.header); got != tc.wantHeader {
				t.Fatalf("%s = %q, want %q", tc.header, got, tc.wantHeader)
			}
		})
	}
}

func TestNewRefusesBadCredentials(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		base string
		auth Auth
	}{
		"none on a public host":               {"https://sms.example/", Auth{Kind: AuthNone}},
		"basic without user":                  {"https://sms.example/", Auth{Kind: AuthBasic}},
		"static without token":                {"https://sms.example/", Auth{Kind: AuthStaticAuthorization}},
		"api key without header":              {"https://sms.example/", Auth{Kind: AuthStaticAPIKey, Token: "k"}},
		"api key token with newline":          {"https://sms.example/", Auth{Kind: AuthStaticAPIKey, Header: "x-k", Token: "a\nb"}},
		"oauth2 over plain http":              {"https://sms.example/", Auth{Kind: AuthOAuth2ClientCredential, TokenURL: "http://id.example/token", ClientID: "c", ClientSecret: "s"}},
		"oauth2 without secret":               {"https://sms.example/", Auth{Kind: AuthOAuth2ClientCredential, TokenURL: "https://id.example/token", ClientID: "c"}},
		"unknown kind":                        {"https://sms.example/", Auth{Kind: "digest"}},
		"base with user info":                 {"https://u:p@sms.example/", Auth{Kind: AuthBasic, Username: "u"}},
		"base with a query":                   {"https://sms.example/?key=1", Auth{Kind: AuthBasic, Username: "u"}},
		"base with another scheme":            {"ftp://sms.example/", Auth{Kind: AuthBasic, Username: "u"}},
		"none on localhost is fine (control)": {"http://localhost:1/", Auth{Kind: AuthNone}},
	}
	for name, tc := range cases {
		cfg := baseConfig(t, tc.base, quickstartAdapter)
		cfg.Auth = tc.auth
		p, err := New(cfg)
		if name == "none on localhost is fine (control)" {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			} else {
				_ = p.Close()
			}
			continue
		}
		if err == nil {
			_ = p.Close()
			t.Errorf("%s: New accepted it", name)
		}
	}
}

// tokenServer is an OAuth 2.0 token endpoint that counts fetches and hands out tok-1, tok-2, …
type tokenServer struct {
	*gateway
	fetches   atomic.Int32
	expiresIn int
	release   chan struct{} // when non-nil, each fetch signals arrived then waits for release to close
	arrived   chan struct{}
	fail      atomic.Bool
}

func newTokenServer(t *testing.T, expiresIn int) *tokenServer {
	ts := &tokenServer{expiresIn: expiresIn}
	ts.gateway = newGateway(t, func(w http.ResponseWriter, r *http.Request) {
		if ts.release != nil {
			select {
			case ts.arrived <- struct{}{}:
			default:
			}
			<-ts.release
		}
		id, secret, ok := r.BasicAuth()
		if !ok || id != "client%3A1" || secret != "s3cret" || r.FormValue("grant_type") != "client_credentials" || r.FormValue("scope") != "sms:send sms:read" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		if ts.fail.Load() {
			http.Error(w, `{"error":"temporarily_unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		n := ts.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"access_token":"tok-%d","token_type":"Bearer","expires_in":%d}`, n, ts.expiresIn)
	})
	return ts
}

// oauthSetup is a gateway that accepts only the token it is told to and a provider using oauth2.
func oauthSetup(t *testing.T, tokens *tokenServer) (*gateway, *Provider, *fakeClock) {
	t.Helper()
	var mu sync.Mutex
	revoked := map[string]bool{}
	g := newGateway(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if auth := r.Header.Get("Authorization"); revoked[auth] {
			w.WriteHeader(http.StatusUnauthorized)
			return
		} else if r.URL.Query().Get("revoke") == "1" {
			revoked[auth] = true
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		answerJSON(http.StatusCreated, `{"id":"r"}`)(w, r)
	})
	cfg := baseConfig(t, g.URL, specAdapter)
	clock := newFakeClock()
	cfg.Clock = clock
	cfg.Auth = Auth{Kind: AuthOAuth2ClientCredential, TokenURL: tokens.URL + "/token", ClientID: "client:1", ClientSecret: "s3cret", Scopes: []string{"sms:send", "sms:read"}}
	return g, newTestProvider(t, cfg), clock
}

func TestOAuth2TokenIsCachedAndRefreshed(t *testing.T) {
	t.Parallel()
	tokens := newTokenServer(t, 3600)
	g, p, clock := oauthSetup(t, tokens)
	send := func() engine.Outcome {
		return p.Send(context.Background(), specOutbound(t, map[string]any{"target": "m"}))
	}
	for range 3 {
		wantOutcome(t, send(), engine.OutcomeAccepted, "")
	}
	if n := tokens.fetches.Load(); n != 1 {
		t.Fatalf("token fetched %d times for 3 sends, want 1", n)
	}
	clock.Advance(59 * time.Minute) // refresh starts a fifth of the lifetime (at most 1 min) early
	wantOutcome(t, send(), engine.OutcomeAccepted, "")
	if n := tokens.fetches.Load(); n != 2 {
		t.Fatalf("token fetched %d times after nearing expiry, want 2", n)
	}
	for i, r := range g.requests() {
		want := "Bearer tok-1"
		if i == 3 {
			want = "Bearer tok-2"
		}
		if got := r.Header.Get("Authorization"); got != want {
			t.Fatalf("request %d Authorization %q, want %q", i, got, want)
		}
	}
}

func TestOAuth2RejectedTokenIsForgotten(t *testing.T) {
	t.Parallel()
	tokens := newTokenServer(t, 3600)
	_, p, _ := oauthSetup(t, tokens)
	wantOutcome(t, p.Send(context.Background(), specOutbound(t, map[string]any{"target": "m?revoke=1"})), engine.OutcomePermanent, "http.401")
	wantOutcome(t, p.Send(context.Background(), specOutbound(t, map[string]any{"target": "m"})), engine.OutcomeAccepted, "")
	if n := tokens.fetches.Load(); n != 2 {
		t.Fatalf("token fetched %d times, want 2 (the refused one was forgotten)", n)
	}
}

func TestOAuth2ConcurrentSendsShareOneFetch(t *testing.T) {
	t.Parallel()
	tokens := newTokenServer(t, 3600)
	tokens.release, tokens.arrived = make(chan struct{}), make(chan struct{}, 1)
	_, p, _ := oauthSetup(t, tokens)
	const senders = 8
	var wg sync.WaitGroup
	outcomes := make([]engine.Outcome, senders)
	for i := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcomes[i] = p.Send(context.Background(), specOutbound(t, map[string]any{"target": "m"}))
		}()
	}
	// The first fetch is held at the endpoint; senders arriving meanwhile must join it.
	<-tokens.arrived
	close(tokens.release)
	wg.Wait()
	for i, o := range outcomes {
		if o.Class != engine.OutcomeAccepted {
			t.Fatalf("sender %d: %+v", i, o)
		}
	}
	if n := len(tokens.requests()); n != 1 {
		t.Fatalf("token endpoint called %d times by %d concurrent senders, want 1", n, senders)
	}
}

func TestOAuth2TokenFailureIsTransient(t *testing.T) {
	t.Parallel()
	tokens := newTokenServer(t, 3600)
	tokens.fail.Store(true)
	g, p, _ := oauthSetup(t, tokens)
	wantOutcome(t, p.Send(context.Background(), specOutbound(t, map[string]any{"target": "m"})), engine.OutcomeTransient, CodeTokenUnavailable)
	if n := len(g.requests()); n != 0 {
		t.Fatalf("gateway saw %d requests without a token", n)
	}
	tokens.fail.Store(false)
	wantOutcome(t, p.Send(context.Background(), specOutbound(t, map[string]any{"target": "m"})), engine.OutcomeAccepted, "")
}

func TestOAuth2FetchEncodesClientCredentials(t *testing.T) {
	t.Parallel()
	// The token server above only accepts "client%3A1": the id "client:1" form-encoded first.
	tokens := newTokenServer(t, 0)
	src, err := newOAuth2Source(Auth{TokenURL: tokens.URL, ClientID: "client:1", ClientSecret: "s3cret", Scopes: []string{"sms:send", "sms:read"}},
		http.DefaultClient, newFakeClock(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	token, lifetime, err := src.fetch(context.Background())
	if err != nil || token != "tok-1" || lifetime != oauth2DefaultLifetime {
		t.Fatalf("fetch = %q, %v, %v; want tok-1 with the default lifetime", token, lifetime, err)
	}
	body := string(tokens.requests()[0].Body)
	if v, _ := url.ParseQuery(body); v.Get("grant_type") != "client_credentials" {
		t.Fatalf("token request body %q", body)
	}
}
