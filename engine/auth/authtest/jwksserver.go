package authtest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// JWKSServer is a real HTTP server (on loopback) serving a JWK Set that tests can rotate or break.
// It is safe for concurrent use.
type JWKSServer struct {
	// URL is the address of the JWK Set document.
	URL  string
	srv  *httptest.Server
	hits atomic.Int64

	mu     sync.Mutex
	body   []byte
	status int
}

// NewJWKSServer starts a server serving the public keys; it is closed when the test ends.
func NewJWKSServer(t testing.TB, keys ...*Key) *JWKSServer {
	t.Helper()
	s := &JWKSServer{body: JWKS(keys...), status: http.StatusOK}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/.well-known/jwks.json"
	t.Cleanup(s.srv.Close)
	return s
}

func (s *JWKSServer) serve(w http.ResponseWriter, _ *http.Request) {
	s.hits.Add(1)
	s.mu.Lock()
	body, status := s.body, s.status
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// SetKeys replaces the served key set (a key rotation) and makes the server answer 200 again.
func (s *JWKSServer) SetKeys(keys ...*Key) { s.SetDocument(http.StatusOK, JWKS(keys...)) }

// SetDocument makes the server answer status with body, e.g. 503 to simulate an outage or 200
// with a malformed document.
func (s *JWKSServer) SetDocument(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

// Hits returns how many requests the server has answered.
func (s *JWKSServer) Hits() int { return int(s.hits.Load()) }
