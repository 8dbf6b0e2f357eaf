package httpconn

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"
)

func TestConnKeepsAliveAndRedialsABrokenConnection(t *testing.T) {
	t.Parallel()
	var calls, conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Idempotency-Key") != "k1" || string(body) != `{"n":1}` {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"id":"m1"}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	u, _ := url.Parse(srv.URL + "/v1/messages")
	c := &Conn{Addr: u.Host}
	defer c.Close()
	req := func() *http.Request {
		return &http.Request{Method: http.MethodPost, URL: u, Host: u.Host, ContentLength: 7,
			Header: http.Header{"Idempotency-Key": {"k1"}}}
	}
	body := []byte(`{"n":1}`)
	for i := range 3 {
		status, raw, err := c.Do(context.Background(), req(), body)
		if err != nil || status != http.StatusAccepted || string(raw) != `{"id":"m1"}` {
			t.Fatalf("request %d: status %d, body %q, err %v", i, status, raw, err)
		}
	}
	if conns.Load() != 1 {
		t.Fatalf("three requests used %d connections, want 1 kept alive", conns.Load())
	}
	srv.CloseClientConnections()
	if status, _, err := c.Do(context.Background(), req(), body); err != nil || status != http.StatusAccepted {
		t.Fatalf("after the server dropped the connection: status %d, err %v", status, err)
	}
	if conns.Load() != 2 || calls.Load() != 4 {
		t.Fatalf("connections %d, calls %d; want a second connection and 4 calls", conns.Load(), calls.Load())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := c.Do(ctx, req(), body); err == nil {
		t.Fatal("a request under an ended context must fail")
	}
}
