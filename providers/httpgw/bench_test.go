package httpgw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/cputime"
)

// BenchmarkSend measures the whole send path: prepare in the pool, the HTTP request to a
// loopback httptest gateway over a kept-alive connection, and interpret.
func BenchmarkSend(b *testing.B) {
	gw := newBenchGateway(b)
	p := benchProvider(b, gw.URL)
	out := smsOutbound()
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		if o := p.Send(context.Background(), out); o.Class != engine.OutcomeAccepted || o.ProviderReference != "gw-1" {
			b.Fatalf("send: %+v", o)
		}
	}
	reportCPU(b, cpu)
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
	cpu := processCPU()
	for b.Loop() {
		if _, refused := p.prepare(context.Background(), out); refused != nil {
			b.Fatalf("prepare: %+v", refused)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkInterpretCall measures classify with the adapter's interpret on a JSON 201 answer.
func BenchmarkInterpretCall(b *testing.B) {
	p := benchProvider(b, "http://127.0.0.1:1/")
	header := http.Header{"Content-Type": {"application/json"}, "Date": {"Mon, 02 Mar 2026 09:30:00 GMT"}}
	ans := &answer{status: http.StatusCreated, header: header, body: []byte(`{"id":"gw-1","status":"queued"}`)}
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		if o, _ := p.classify(context.Background(), ans); o.Class != engine.OutcomeAccepted || o.ProviderReference != "gw-1" {
			b.Fatalf("classify: %+v", o)
		}
	}
	reportCPU(b, cpu)
}

// BenchmarkReceiptCall measures ParseReceipts of one JSON delivery receipt (verification excluded).
func BenchmarkReceiptCall(b *testing.B) {
	p := benchProvider(b, "http://127.0.0.1:1/")
	body := []byte(`{"id":"gw-1","status":"delivered","to":"+15550123","at":"2026-03-02T09:30:05Z"}`)
	r := callbackRequest("/callbacks/bench?sig=abc", "application/json", body)
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		if got, err := p.ParseReceipts(context.Background(), r, body); err != nil || len(got) != 1 {
			b.Fatalf("receipt: %+v, %v", got, err)
		}
	}
	reportCPU(b, cpu)
}

// processCPU is the CPU time the process has used. On a machine shared with other work,
// CPU time per operation is a steadier figure than wall time.
func processCPU() time.Duration {
	d, _ := cputime.Process()
	return d
}

// reportCPU reports the CPU time per operation since start (GC included).
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(processCPU()-start)/float64(b.N), "cpu-ns/op")
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
