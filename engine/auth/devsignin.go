package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"switchboard/engine"
)

// The dev issuer's sign-in endpoints (docs/console.md, "Signing in"): enough of an OpenID
// provider for the operator console to sign in with authorization code and PKCE (S256) on a
// machine without one. It serves discovery, the JWK Set, a sign-in page that lists the
// package's clients to sign in as, and the token endpoint. Codes are random, single-use, bound
// to the client, redirect URI and code challenge, and live one minute.

//go:embed signin
var signInFiles embed.FS

var signInPage = template.Must(template.ParseFS(signInFiles, "signin/page.html"))

// DevClient is a client the sign-in page offers: tokens minted for it carry its id as sub and
// client_id, and its access profile's required scopes.
type DevClient struct {
	ID     string
	Role   string
	Scopes []string
}

// DevSignInOptions configures DevIssuer.SignIn.
type DevSignInOptions struct {
	// Clients are offered on the sign-in page, in this order.
	Clients []DevClient
	// RedirectURIs are the exact redirect URIs an authorization request may name.
	RedirectURIs []string
	// TokenTTL is the lifetime of minted tokens; 0 means one hour.
	TokenTTL time.Duration
	Clock    engine.Clock
}

// codeTTL is how long an authorization code can be exchanged.
const codeTTL = time.Minute

// devCode is one issued authorization code.
type devCode struct {
	clientID, redirectURI, challenge string
	as                               DevClient
	expires                          time.Time
}

type devSignIn struct {
	d     *DevIssuer
	opts  DevSignInOptions
	mu    sync.Mutex
	codes map[string]devCode
}

// SignIn returns the handler of the issuer's sign-in endpoints, to serve at the root of the
// issuer's URL: /.well-known/openid-configuration, /jwks.json, /authorize, /token and
// /signin.css. It is safe for concurrent use.
func (d *DevIssuer) SignIn(opts DevSignInOptions) http.Handler {
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = time.Hour
	}
	if opts.Clock == nil {
		opts.Clock = engine.SystemClock{}
	}
	s := &devSignIn{d: d, opts: opts, codes: map[string]devCode{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", s.discovery)
	mux.HandleFunc("GET /jwks.json", s.jwks)
	mux.HandleFunc("GET /authorize", s.authorizePage)
	mux.HandleFunc("POST /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("OPTIONS /token", s.preflight)
	mux.HandleFunc("GET /signin.css", func(w http.ResponseWriter, r *http.Request) {
		b, _ := signInFiles.ReadFile("signin/signin.css")
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		_, _ = w.Write(b)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		mux.ServeHTTP(w, r)
	})
}

func (s *devSignIn) url(p string) string { return strings.TrimSuffix(s.d.iss, "/") + p }

// cors lets the console, on another origin, read public answers (discovery, keys, tokens).
func cors(w http.ResponseWriter) {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Access-Control-Allow-Headers", "Content-Type")
}

func (s *devSignIn) discovery(w http.ResponseWriter, _ *http.Request) {
	cors(w)
	writeDevJSON(w, http.StatusOK, map[string]any{
		"issuer": s.d.iss, "authorization_endpoint": s.url("/authorize"), "token_endpoint": s.url("/token"),
		"jwks_uri": s.url("/jwks.json"), "response_types_supported": []string{"code"},
		"grant_types_supported": []string{"authorization_code"}, "code_challenge_methods_supported": []string{"S256"},
		"token_endpoint_auth_methods_supported": []string{"none"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"EdDSA"},
	})
}

func (s *devSignIn) jwks(w http.ResponseWriter, _ *http.Request) {
	cors(w)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.d.JWKS())
}

func (s *devSignIn) preflight(w http.ResponseWriter, _ *http.Request) {
	cors(w)
	w.Header().Set("Access-Control-Allow-Methods", "POST")
	w.WriteHeader(http.StatusNoContent)
}

// authRequest is a checked authorization request.
type authRequest struct {
	ClientID, RedirectURI, State, Challenge, Scope string
}

// parseAuthRequest checks an authorization request. A bad redirect URI or client is shown on
// the page (never redirected to); other faults go back to the redirect URI as error=….
func (s *devSignIn) parseAuthRequest(v url.Values) (authRequest, string, bool) {
	req := authRequest{ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), State: v.Get("state"),
		Challenge: v.Get("code_challenge"), Scope: v.Get("scope")}
	if !slices.Contains(s.opts.RedirectURIs, req.RedirectURI) {
		return req, "The redirect URI is not one this issuer knows.", false
	}
	if s.client(req.ClientID) == nil {
		return req, "The client is not one the package names.", false
	}
	switch {
	case v.Get("response_type") != "code":
		return req, "unsupported_response_type", true
	case v.Get("code_challenge_method") != "S256" || len(req.Challenge) < 43 || len(req.Challenge) > 128:
		return req, "invalid_request", true
	}
	return req, "", true
}

func (s *devSignIn) client(id string) *DevClient {
	for i := range s.opts.Clients {
		if s.opts.Clients[i].ID == id {
			return &s.opts.Clients[i]
		}
	}
	return nil
}

// pageData is what the sign-in page shows.
type pageData struct {
	Error   string
	Request authRequest
	Clients []DevClient
}

// securePage sets the headers of the sign-in page: its own stylesheet only, forms to itself
// and, after the redirect, to the registered redirect URIs.
func (s *devSignIn) securePage(w http.ResponseWriter) {
	targets := []string{"'self'"}
	for _, r := range s.opts.RedirectURIs {
		if u, err := url.Parse(r); err == nil {
			targets = append(targets, u.Scheme+"://"+u.Host)
		}
	}
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; form-action "+strings.Join(targets, " ")+"; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
}

func (s *devSignIn) authorizePage(w http.ResponseWriter, r *http.Request) {
	req, fault, redirectable := s.parseAuthRequest(r.URL.Query())
	if fault != "" && redirectable {
		redirectError(w, r, req, fault)
		return
	}
	s.securePage(w)
	if fault != "" {
		w.WriteHeader(http.StatusBadRequest)
	}
	_ = signInPage.Execute(w, pageData{Error: fault, Request: req, Clients: s.opts.Clients})
}

// authorize is the sign-in form's POST: it issues a code for the chosen client.
func (s *devSignIn) authorize(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, "the form could not be read", http.StatusBadRequest)
		return
	}
	req, fault, redirectable := s.parseAuthRequest(r.PostForm)
	as := s.client(r.PostForm.Get("as"))
	if fault == "" && as == nil {
		fault = "access_denied"
	}
	if fault != "" {
		if redirectable {
			redirectError(w, r, req, fault)
			return
		}
		s.securePage(w)
		w.WriteHeader(http.StatusBadRequest)
		_ = signInPage.Execute(w, pageData{Error: fault, Request: req, Clients: s.opts.Clients})
		return
	}
	code := randomToken()
	s.mu.Lock()
	now := s.opts.Clock.Now()
	for k, c := range s.codes {
		if now.After(c.expires) {
			delete(s.codes, k)
		}
	}
	s.codes[code] = devCode{clientID: req.ClientID, redirectURI: req.RedirectURI, challenge: req.Challenge, as: *as,
		expires: now.Add(codeTTL)}
	s.mu.Unlock()
	q := url.Values{"code": {code}}
	if req.State != "" {
		q.Set("state", req.State)
	}
	http.Redirect(w, r, req.RedirectURI+"?"+q.Encode(), http.StatusSeeOther)
}

func redirectError(w http.ResponseWriter, r *http.Request, req authRequest, code string) {
	q := url.Values{"error": {code}}
	if req.State != "" {
		q.Set("state", req.State)
	}
	http.Redirect(w, r, req.RedirectURI+"?"+q.Encode(), http.StatusSeeOther)
}

// token exchanges a code (grant_type authorization_code) for an access token, once, checking
// the client, the redirect URI and the PKCE verifier.
func (s *devSignIn) token(w http.ResponseWriter, r *http.Request) {
	cors(w)
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		writeDevJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	f := r.PostForm
	s.mu.Lock()
	c, ok := s.codes[f.Get("code")]
	delete(s.codes, f.Get("code")) // single use, whatever follows
	now := s.opts.Clock.Now()
	s.mu.Unlock()
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	if !ok || now.After(c.expires) || c.clientID != f.Get("client_id") || c.redirectURI != f.Get("redirect_uri") ||
		subtle.ConstantTimeCompare([]byte(challenge), []byte(c.challenge)) != 1 {
		writeDevJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	tok, err := s.d.Mint(c.as.ID, c.as.Scopes, s.opts.TokenTTL, now)
	if err != nil {
		writeDevJSON(w, http.StatusInternalServerError, map[string]string{"error": "server_error"})
		return
	}
	writeDevJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer",
		"expires_in": int(s.opts.TokenTTL / time.Second), "scope": strings.Join(c.as.Scopes, " ")})
}

func writeDevJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
