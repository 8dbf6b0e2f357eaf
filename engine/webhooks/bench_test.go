package webhooks_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"switchboard/engine/cputime"
	"switchboard/engine/enginetest"
	"switchboard/engine/webhooks"
	localreceiver "switchboard/engine/webhooks/receiver"
)

// benchConcurrency is the endpoint's concurrency in every part of BenchmarkDelivery: the
// default of the runtime file.
const benchConcurrency = webhooks.DefaultConcurrency

// BenchmarkDelivery splits what one event costs the machine, both ends in this process, into
// three layers, each reported as cpu-µs/event:
//
//   - post: an HTTP/1.1 POST over loopback of a real event's body and headers to a handler
//     that reads the body and answers 204, the floor every delivery pays whatever the sender
//     and the receiver do;
//   - receiver: the same POST to receiver.Receiver, which checks the signature and decodes the
//     event (what `switchboard bench --webhooks` spends on each one);
//   - worker: the whole delivery, from rows already in the outbox of a real SQLite store:
//     claim, read the subjects, build and sign the bodies, post them to receiver.Receiver and
//     record the outcomes. Writing the rows is part of the acceptance and is not measured.
//
// Run with:
//
//	go test -run '^$' -bench BenchmarkDelivery -benchtime 20000x ./engine/webhooks/
func BenchmarkDelivery(b *testing.B) {
	header, body := captureDelivery(b)
	b.Run("post", func(b *testing.B) {
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusNoContent)
		})}
		benchReplay(b, serveLoopback(b, srv), header, body)
	})
	b.Run("receiver", func(b *testing.B) {
		rc := localreceiver.New(localreceiver.Options{Key: testKey(), KeepLags: true, Keep: 1})
		url, err := rc.Start("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = rc.Close() })
		benchReplay(b, url, header, body)
		if s := rc.Stats(); s.Refused > 0 {
			b.Fatalf("the receiver refused %d of the replayed deliveries", s.Refused)
		}
	})
	b.Run("worker", benchWorker)
}

// captureDelivery has the worker deliver one event to a handler that keeps its headers and
// body, so the layers below the worker replay a delivery exactly as the worker makes it.
func captureDelivery(b *testing.B) (http.Header, []byte) {
	var (
		mu     sync.Mutex
		header http.Header
		body   []byte
	)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		header, body = r.Header.Clone(), raw
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})}
	url := serveLoopback(b, srv)
	f := newFixture(b, enginetest.NewFakeClock(time.Now()), endpoint("capture", url))
	f.accept(1)
	if n, err := f.worker.DeliverDue(context.Background()); err != nil || n != 1 {
		b.Fatalf("DeliverDue = %d, %v; want one attempt", n, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if body == nil {
		b.Fatal("the worker delivered nothing")
	}
	return header, body
}

// benchReplay posts the captured delivery b.N times from benchConcurrency callers.
func benchReplay(b *testing.B, url string, header http.Header, body []byte) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchConcurrency}}
	b.SetParallelism(max(1, benchConcurrency/2)) // × GOMAXPROCS(2)
	b.ResetTimer()
	cpu0 := processCPU(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header = header.Clone()
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNoContent {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64((processCPU(b)-cpu0).Microseconds())/float64(b.N), "cpu-µs/event")
}

// benchWorker has a running worker deliver b.N outbox rows to receiver.Receiver.
func benchWorker(b *testing.B) {
	done := make(chan struct{})
	distinct := 0
	// OnEvent runs under the receiver's lock, one delivery at a time.
	rc := localreceiver.New(localreceiver.Options{Key: testKey(), Keep: 1, OnEvent: func(ev localreceiver.Event) {
		if !ev.Duplicate {
			if distinct++; distinct == b.N {
				close(done)
			}
		}
	}})
	url, err := rc.Start("127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rc.Close() })
	ep := endpoint("bench", url)
	ep.Concurrency = benchConcurrency
	f := newFixture(b, enginetest.NewFakeClock(time.Now()), ep)
	f.accept(b.N)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	b.ResetTimer()
	cpu0 := processCPU(b)
	go func() { defer close(stopped); f.worker.Run(ctx) }()
	<-done
	cpu := processCPU(b) - cpu0
	b.StopTimer()
	cancel()
	<-stopped
	if s := rc.Stats(); s.Refused > 0 || s.Distinct != b.N {
		b.Fatalf("the receiver took %d distinct events and refused %d; want %d and 0", s.Distinct, s.Refused, b.N)
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/event")
}

// serveLoopback serves srv on a loopback port until the benchmark ends and returns its URL.
func serveLoopback(b *testing.B, srv *http.Server) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// processCPU is the CPU time this process has used so far.
func processCPU(b *testing.B) time.Duration {
	d, ok := cputime.Process()
	if !ok {
		b.Skip("needs a Unix (getrusage): the process's CPU time cannot be read here")
	}
	return d
}
