package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/engine/cputime"
)

// BenchmarkAcceptPath measures the whole accept path over loopback HTTP: handler, token check
// (cached after the first request of each caller), strict decoding, schema validation, render,
// and the durable group commit into a real SQLite file. The dispatcher is not running, so only
// acceptance is measured. Run with:
//
//	go test -run '^$' -bench BenchmarkAcceptPath -benchtime 20000x ./cmd/switchboard/
func BenchmarkAcceptPath(b *testing.B) {
	e := newAPIEnvB(b)
	token := e.token("case-system")
	body, _ := json.Marshal(smsBody(nil))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
	var seq atomic.Int64
	b.SetParallelism(16) // 16 × GOMAXPROCS(2) = 32 concurrent callers
	b.ReportAllocs()
	b.ResetTimer()
	start, cpuStart, writes := time.Now(), processCPU(b), e.stack.store.WriterStats()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", e.srv.URL+"/v1/messages", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			n := seq.Add(1)
			if n%20 == 0 {
				// The stack runs on a fake clock: move it as real time would (about 20k/s), so
				// the caller's token bucket refills as it does in production.
				e.clock.Advance(time.Millisecond)
			}
			req.Header.Set("Idempotency-Key", fmt.Sprint("bench-", n))
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 202 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "accepted/s")
	b.ReportMetric(float64((processCPU(b)-cpuStart).Microseconds())/float64(b.N), "cpu-µs/accept")
	// Group commit: how many acceptances shared each write transaction.
	if w := e.stack.store.WriterStats(); w.Batches > writes.Batches {
		b.ReportMetric(float64(w.Requests-writes.Requests)/float64(w.Batches-writes.Batches), "accepts/batch")
	}
}

// processCPU is the user and system CPU time this process has used so far. The benchmark
// reports it per accept because wall-clock rates move with whatever else the machine runs; it
// counts the in-process HTTP client as well as the server.
func processCPU(b *testing.B) time.Duration {
	d, ok := cputime.Process()
	if !ok {
		b.Fatal("the process's CPU time cannot be read here")
	}
	return d
}
