package httpgw_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/providers/httpgw"
	"switchboard/providers/providertest"
)

const conformanceAdapter = `
function prepare(message, profile) {
  return {target: "messages", headers: {"x-request-id": message.messageId},
    body: {to: message.recipient, from: profile.sender, text: message.parts.text, reference: message.messageId}};
}
function receipt(request) { return null; }
`

// farGateway is an httptest server that treats every request as b.
func farGateway(t *testing.T, b providertest.Behaviour, received *atomic.Int32) string {
	t.Helper()
	if b == providertest.Unreachable {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		_ = ln.Close()
		return "http://" + addr + "/"
	}
	released := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		_, _ = io.Copy(io.Discard, r.Body)
		switch b {
		case providertest.Accept:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, `{"id":"gw-1"}`)
		case providertest.Refuse:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid number"}`)
		case providertest.DropAfterReceive:
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				_ = conn.Close()
			}
		case providertest.StallAfterReceive:
			select {
			case <-r.Context().Done():
			case <-released:
			}
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(released) }) // LIFO: release stalled handlers before Close waits for them
	return srv.URL + "/"
}

func TestConformance(t *testing.T) {
	t.Parallel()
	providertest.Exercise(t, providertest.Harness{
		Kind: "http",
		New: func(t *testing.T, b providertest.Behaviour) providertest.Far {
			var received atomic.Int32
			base, err := url.Parse(farGateway(t, b, &received))
			if err != nil {
				t.Fatal(err)
			}
			p, err := httpgw.New(httpgw.Config{
				ID: "conformance", Source: conformanceAdapter, RequestHeaders: []string{"x-request-id"},
				ReceiptsCallback: true, BaseURL: base, Timeout: 5 * time.Second, Auth: httpgw.Auth{Kind: httpgw.AuthNone},
			})
			if err != nil {
				t.Fatal(err)
			}
			return providertest.Far{Provider: p, Received: func() int { return int(received.Load()) }}
		},
	})
}
