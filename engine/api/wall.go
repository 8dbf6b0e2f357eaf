package api

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Limits bound what one HTTP connection may hold of a listener: a client that sends its request
// one byte every few seconds, or never sends the next one, is cut off instead of holding a
// connection and a goroutine indefinitely. README's Operations section names each one.
type Limits struct {
	// HeaderTimeout is how long a request line and its headers may take to arrive.
	HeaderTimeout time.Duration
	// BodyTimeout is how long a request body may take to arrive once its headers have; a body
	// still incomplete then ends the request with a problem and the connection. It bounds reads
	// only, so an answer that takes long to compute or to send is not cut.
	BodyTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its next request.
	IdleTimeout time.Duration
	// MaxHeaderBytes caps the request line and headers (Go's server allows 4 KiB of slack
	// beyond it before answering 431).
	MaxHeaderBytes int
}

// DefaultLimits are the limits serve runs with.
func DefaultLimits() Limits {
	return Limits{HeaderTimeout: 5 * time.Second, BodyTimeout: 30 * time.Second,
		IdleTimeout: 60 * time.Second, MaxHeaderBytes: 16 << 10}
}

// HTTPServer serves one listener behind the wall: the limits above, and the same headers on
// every answer, those Go's server writes by itself included.
type HTTPServer struct {
	srv *http.Server
}

// NewHTTPServer builds the server for h under l; zero members of l take DefaultLimits' values.
func NewHTTPServer(h http.Handler, l Limits) *HTTPServer {
	d := DefaultLimits()
	if l.HeaderTimeout <= 0 {
		l.HeaderTimeout = d.HeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = d.BodyTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return &HTTPServer{srv: &http.Server{
		Handler:           bodyDeadline(h, l.BodyTimeout),
		ReadHeaderTimeout: l.HeaderTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}}
}

// Serve answers connections from ln until Shutdown; it returns nil after Shutdown.
func (s *HTTPServer) Serve(ln net.Listener) error {
	if err := s.srv.Serve(&wallListener{Listener: ln}); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting and waits for the requests in flight until ctx ends.
func (s *HTTPServer) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// setCommonHeaders sets the headers every answer carries.
func setCommonHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// bodyDeadline gives every request with a body d to deliver it, through a read deadline on the
// connection set when the handler starts. Go's server lifts the deadline when the body has been
// read to its end (it then watches the connection for the client going away), so an answer
// that takes long to compute is not cut. A deadline that passes makes the body's reads fail:
// the handler answers its usual unreadable-body problem, and the server closes the connection
// after the answer, so the rest of a slow body is never read as a next request.
func bodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setCommonHeaders(w.Header())
		if r.Body != nil && r.Body != http.NoBody {
			// Only a writer without a connection (a test's recorder) cannot take a deadline.
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		h.ServeHTTP(w, r)
	})
}
