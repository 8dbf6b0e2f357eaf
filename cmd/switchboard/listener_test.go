package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// checkListenerWall sends what Go's HTTP server answers by itself (a malformed request line,
// headers over the cap) to a serve listener, and checks that each answer is a problem with the
// headers every answer carries.
func checkListenerWall(t *testing.T, addr string) {
	t.Helper()
	for _, tc := range []struct {
		request string
		status  int
		code    string
	}{
		{"NOT-HTTP-7c1d\r\n\r\n", 400, "request.invalid"},
		{"GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("b", 24<<10) + "\r\n\r\n", 431, "request.headers-too-large"},
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.WriteString(c, tc.request); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("%s: read answer: %v", addr, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = c.Close()
		var p map[string]any
		_ = json.Unmarshal(body, &p)
		if resp.StatusCode != tc.status || p["code"] != tc.code || resp.Header.Get("Cache-Control") != "no-store" ||
			resp.Header.Get("Content-Type") != "application/problem+json" || strings.Contains(string(body), "7c1d") {
			t.Fatalf("%s: answer %d %v: %s", addr, resp.StatusCode, resp.Header, body)
		}
	}
}
