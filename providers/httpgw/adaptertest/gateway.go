package adaptertest

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// recorded is one request the gateway received.
type recorded struct {
	method, target string
	header         http.Header
	body           []byte
}

// gateway is the stand-in for the real gateway: an httptest server that answers each request
// with the answer the case gives for the current send (writeAnswer), and records what it
// received.
type gateway struct {
	srv    *httptest.Server
	mu     sync.Mutex
	answer *httpMessage
	seen   []recorded
}

func newGateway() *gateway {
	g := &gateway{}
	g.srv = httptest.NewUnstartedServer(http.HandlerFunc(g.serve))
	// With keep-alive, net/http replays a request carrying Idempotency-Key when a reused
	// connection breaks; one connection per request keeps every send to one request.
	g.srv.Config.SetKeepAlivesEnabled(false)
	g.srv.Start()
	return g
}

// URL is the gateway's base URL (http://127.0.0.1:port).
func (g *gateway) URL() string { return g.srv.URL }

// Close stops the server.
func (g *gateway) Close() { g.srv.Close() }

// expect sets the answer to the next requests and forgets what was recorded.
func (g *gateway) expect(answer *httpMessage) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.answer, g.seen = answer, nil
}

// received returns the requests recorded since expect.
func (g *gateway) received() []recorded {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]recorded(nil), g.seen...)
}

func (g *gateway) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.seen = append(g.seen, recorded{method: r.Method, target: r.URL.RequestURI(), header: r.Header.Clone(), body: body})
	answer := g.answer
	g.mu.Unlock()
	writeAnswer(w, answer)
}

// writeAnswer writes a case's answer: its status, headers and body; "!close" drops the
// connection, and a missing answer is 599 (a status no real gateway uses), so that an
// unexpected request shows.
func writeAnswer(w http.ResponseWriter, answer *httpMessage) {
	if answer == nil || answer.start == "" {
		http.Error(w, "adaptertest: the case gives no answer for this request", 599)
		return
	}
	if answer.start == closeDirective {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				_ = conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // drops the connection without an answer
	}
	status, err := answer.status()
	if err != nil {
		http.Error(w, "adaptertest: "+err.Error(), 599)
		return
	}
	for name, values := range answer.header {
		for _, v := range values {
			w.Header().Add(name, v)
		}
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(answer.body)))
	w.WriteHeader(status)
	_, _ = w.Write(answer.body)
}

// parseAnswer reads a send's answer.http; "!close" drops the connection, an empty section
// gives no answer.
func parseAnswer(data []byte) (*httpMessage, error) {
	if strings.TrimSpace(string(data)) == closeDirective {
		return &httpMessage{start: closeDirective, header: http.Header{}}, nil
	}
	m, err := parseHTTPMessage(data)
	if err != nil {
		return nil, err
	}
	if m.start != "" {
		if _, err := m.status(); err != nil {
			return nil, err
		}
	}
	return m, nil
}
