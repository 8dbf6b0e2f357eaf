package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// roundRobin is the load balancer in front of several serve instances (the bench's receipts,
// the scale-out tests' callers): each request goes to the next backend, and to the one after
// when a backend refuses the connection (it is down). A request that broke after reaching a
// backend is answered 502, and 503 when no backend is up; callers retry both, with the same
// Idempotency-Key for submissions.
type roundRobin struct {
	url       string
	backends  []string
	next      atomic.Uint64
	transport *http.Transport
	srv       *http.Server
}

// startRoundRobin listens on a loopback port and balances over backends (host:port).
func startRoundRobin(backends []string) (*roundRobin, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy listen: %w", err)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 512, 128
	p := &roundRobin{url: "http://" + ln.Addr().String(), transport: t, backends: backends}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

func (p *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 2<<20))
	if err != nil {
		http.Error(w, "proxy: read the request body", http.StatusBadRequest)
		return
	}
	backends := p.backends
	first := p.next.Add(1)
	for i := range uint64(len(backends)) {
		backend := backends[(first+i)%uint64(len(backends))]
		out, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+backend+r.URL.RequestURI(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, "proxy: "+err.Error(), http.StatusBadRequest)
			return
		}
		out.Header = r.Header.Clone()
		resp, err := p.transport.RoundTrip(out)
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			continue // down: try the next one
		}
		if err != nil {
			http.Error(w, "proxy: the backend broke off", http.StatusBadGateway)
			return
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		resp.Body.Close()
		return
	}
	w.Header().Set("Retry-After", "1")
	http.Error(w, "proxy: no backend is up", http.StatusServiceUnavailable)
}

func (p *roundRobin) close() {
	_ = p.srv.Close()
	p.transport.CloseIdleConnections()
}
