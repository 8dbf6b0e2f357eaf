package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// wallSetup serves the API's root handler, with one extra route that reads its body as every
// body-taking route does, behind NewHTTPServer with short limits on a loopback listener.
func wallSetup(t *testing.T, l Limits, extra map[string]http.HandlerFunc) string {
	t.Helper()
	s := New(Config{Logger: slog.New(slog.DiscardHandler)})
	s.mux.HandleFunc("POST /test/body", func(w http.ResponseWriter, r *http.Request) {
		if _, err := readRaw(r); err != nil {
			s.writeProblem(w, r, err)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	for pattern, h := range extra {
		s.mux.HandleFunc(pattern, h)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(s.Handler(), l)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return ln.Addr().String()
}

// rawConn dials addr; every read gives up after bound, so that a server that fails to cut a
// connection fails the test instead of hanging it.
func rawConn(t *testing.T, addr string, bound time.Duration) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(bound))
	return c
}

func readAnswer(t *testing.T, br *bufio.Reader) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read answer body: %v", err)
	}
	return resp, body
}

// checkProblem asserts a problem+json answer with the common headers, exactly the problem's
// members, the code, and nothing of what the client sent.
func checkProblem(t *testing.T, resp *http.Response, body []byte, status int, code string, sent ...string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("status %d, want %d: %s", resp.StatusCode, status, body)
	}
	checkCommonHeaders(t, resp)
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q: %s", ct, body)
	}
	var members map[string]any
	if err := json.Unmarshal(body, &members); err != nil {
		t.Fatalf("problem body %q: %v", body, err)
	}
	for _, m := range []string{"type", "title", "status", "detail", "code", "traceId"} {
		if _, ok := members[m]; !ok {
			t.Fatalf("problem lacks %s: %s", m, body)
		}
	}
	if len(members) != 6 || members["code"] != code || members["status"] != float64(status) {
		t.Fatalf("problem %s, want code %s status %d", body, code, status)
	}
	for _, s := range sent {
		if strings.Contains(string(body), s) {
			t.Fatalf("problem echoes %q: %s", s, body)
		}
	}
}

func checkCommonHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	if got := resp.Header.Values("Cache-Control"); len(got) != 1 || got[0] != "no-store" {
		t.Fatalf("Cache-Control %q", got)
	}
	if got := resp.Header.Values("X-Content-Type-Options"); len(got) != 1 || got[0] != "nosniff" {
		t.Fatalf("X-Content-Type-Options %q", got)
	}
}

// checkClosed asserts that the server closed the connection (EOF before the test's bound).
func checkClosed(t *testing.T, br *bufio.Reader) {
	t.Helper()
	b, err := br.ReadByte()
	if err == nil {
		t.Fatalf("connection still open: read %q", b)
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("connection still open when the test's bound passed")
	}
}

func TestWallAnswersWhatGoWritesByItself(t *testing.T) {
	t.Parallel()
	addr := wallSetup(t, Limits{MaxHeaderBytes: 1024}, nil)
	cases := []struct {
		name, request string
		status        int
		code          string // "" when the answer keeps Go's text body
	}{
		{"malformed request line", "GARBAGE-zqxw\r\n\r\n", 400, engine.CodeRequestInvalid},
		{"invalid header name", "GET /health HTTP/1.1\r\nHost: x\r\nBad Header-zqxw: y\r\n\r\n", 400, engine.CodeRequestInvalid},
		{"missing host", "GET /health HTTP/1.1\r\n\r\n", 400, engine.CodeRequestInvalid},
		{"headers over the cap", "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n", 431, engine.CodeHeadersTooLarge},
		{"unknown transfer coding", "POST /test/body HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: zip\r\n\r\n", 501, ""},
		{"unknown expectation", "POST /test/body HTTP/1.1\r\nHost: x\r\nExpect: tea\r\nContent-Length: 1\r\n\r\nx", 417, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := rawConn(t, addr, 10*time.Second)
			if _, err := io.WriteString(c, tc.request); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, body := readAnswer(t, br)
			if tc.code != "" {
				checkProblem(t, resp, body, tc.status, tc.code, "zqxw", "GARBAGE")
			} else if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			checkCommonHeaders(t, resp)
			checkClosed(t, br)
		})
	}
}

func TestWallLeavesHandlerAnswersAlone(t *testing.T) {
	t.Parallel()
	addr := wallSetup(t, Limits{}, nil)
	c := rawConn(t, addr, 10*time.Second)
	br := bufio.NewReader(c)
	for i := 0; i < 2; i++ { // one kept-alive connection, two answers
		if _, err := io.WriteString(c, "GET /nowhere HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, body := readAnswer(t, br)
		checkProblem(t, resp, body, 404, engine.CodeRequestNotFound)
	}
}

func TestWallCutsSlowClients(t *testing.T) {
	t.Parallel()
	const limit = 300 * time.Millisecond
	addr := wallSetup(t, Limits{HeaderTimeout: limit, BodyTimeout: limit, IdleTimeout: limit}, nil)
	// Each bound is many times the limit: the server must cut the client well before it.
	const bound = 10 * time.Second

	t.Run("headers one byte at a time", func(t *testing.T) {
		t.Parallel()
		c := rawConn(t, addr, bound)
		_, _ = io.WriteString(c, "POST /test/body HTTP/1.1\r\n")
		checkClosed(t, bufio.NewReader(c))
	})
	t.Run("body one byte at a time", func(t *testing.T) {
		t.Parallel()
		c := rawConn(t, addr, bound)
		_, _ = io.WriteString(c, "POST /test/body HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
		stop := make(chan struct{})
		defer close(stop)
		go func() { // keeps dripping, well inside the limit, until the answer came
			tick := time.NewTicker(limit / 3)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := io.WriteString(c, " "); err != nil {
						return
					}
				}
			}
		}()
		br := bufio.NewReader(c)
		resp, body := readAnswer(t, br)
		checkProblem(t, resp, body, 400, engine.CodeRequestInvalid)
		if !resp.Close {
			t.Fatal("the answer to a cut body does not close the connection")
		}
		checkClosed(t, br)
	})
	t.Run("idle kept-alive connection", func(t *testing.T) {
		t.Parallel()
		c := rawConn(t, addr, bound)
		_, _ = io.WriteString(c, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n")
		br := bufio.NewReader(c)
		if resp, _ := readAnswer(t, br); resp.StatusCode != 200 || resp.Close {
			t.Fatalf("health: %d close=%v", resp.StatusCode, resp.Close)
		}
		checkClosed(t, br)
	})
}

func TestWallLetsALongAnswerRunPastTheBodyDeadline(t *testing.T) {
	t.Parallel()
	const limit = 200 * time.Millisecond
	addr := wallSetup(t, Limits{BodyTimeout: limit}, map[string]http.HandlerFunc{
		"POST /test/slow": func(w http.ResponseWriter, r *http.Request) {
			if _, err := io.ReadAll(r.Body); err != nil {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			select { // the request's context ends if the body's deadline outlived the body
			case <-r.Context().Done():
				w.WriteHeader(http.StatusServiceUnavailable)
			case <-time.After(3 * limit):
				w.WriteHeader(http.StatusOK)
			}
		},
	})
	c := rawConn(t, addr, 10*time.Second)
	_, _ = io.WriteString(c, "POST /test/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	br := bufio.NewReader(c)
	resp, _ := readAnswer(t, br)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: the body's deadline cut an answer computed after the body was read", resp.StatusCode)
	}
	checkCommonHeaders(t, resp)
}
