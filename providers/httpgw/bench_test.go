package httpgw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"switchboard/engine"
)

// BenchmarkSend measures the whole send path: prepare in the pool, the HTTP request to a
// loopback httptest gateway over a kept-alive connection, and interpret.
func BenchmarkSend(b *testing.B) {
	gw := newBenchGateway(b)
	p := benchProvider(b, gw.URL)
	out := smsOutbound()
	b.ReportAllocs()
	for b.Loop() {
		if o := p.Send(context.Background(), out); o.Class != engine.OutcomeAccepted || o.ProviderReference != "gw-1" {
			b.Fatalf("send: %+v", o)
		}
	}
}

// BenchmarkSendParallel is BenchmarkSend from GOMAXPROCS goroutines (throughput).
func BenchmarkSendParallel(b *testing.B) {
	gw := newBenchGateway(b)
	p := benchProvider(b, gw.URL)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		out := smsOutbound()
		for pb.Next() {
			if o := p.Send(context.Background(), out); o.Class != engine.OutcomeAccepted {
				b.Errorf("send: %+v", o)
				return
			}
		}
	})
}

// BenchmarkPrepareCall measures one pooled prepare call and its validation, without HTTP.
func BenchmarkPrepareCall(b *testing.B) {
	p := benchProvider(b, "http://127.0.0.1:1/")
	out := smsOutbound()
	b.ReportAllocs()
	for b.Loop() {
		if _, refused := p.prepare(context.Background(), out); refused != nil {
			b.Fatalf("prepare: %+v", refused)
		}
	}
}

func newBenchGateway(b *testing.B) *gateway {
	b.Helper()
	g := &gateway{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"gw-1"}`))
	}))
	b.Cleanup(g.Close)
	return g
}

func benchProvider(b *testing.B, base string) *Provider {
	b.Helper()
	u, err := url.Parse(base)
	if err != nil {
		b.Fatal(err)
	}
	p, err := New(Config{ID: "bench", Source: quickstartAdapter, RequestHeaders: []string{"content-type", "x-request-id"},
		ReceiptsCallback: true, BaseURL: u, Auth: Auth{Kind: AuthNone}, ConcurrencyLimit: 64})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = p.Close() })
	return p
}
