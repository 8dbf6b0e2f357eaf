package smtp_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"switchboard/engine"
	smtp "switchboard/providers/smtp"
	"switchboard/providers/smtp/dkimkey"
	"switchboard/providers/smtp/smtpsink"
)

// BenchmarkSendLoopback measures messages per second from the provider to the loopback dev
// sink with connection reuse (8 conversations at once, the dispatcher's default concurrency).
//
//	go test -run '^$' -bench SendLoopback -benchtime 20000x ./providers/smtp/
func BenchmarkSendLoopback(b *testing.B) {
	for _, bc := range []struct {
		name  string
		alg   dkimkey.Algorithm // "" = unsigned
		files bool              // the sink writes .eml files
	}{
		{"unsigned", "", false},
		{"dkim-ed25519", dkimkey.Ed25519, false},
		{"dkim-rsa2048", dkimkey.RSA, false},
		{"dkim-ed25519+eml-files", dkimkey.Ed25519, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			dir := ""
			if bc.files {
				dir = b.TempDir()
			}
			sink := smtpsink.New(dir, smtpsink.Options{})
			addr, err := sink.Start("127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = sink.Close() })
			host, port := splitHostPort(b, addr)
			cfg := smtp.Config{ID: "bench", Host: host, Port: port, TLS: smtp.TLSNone, ConcurrencyLimit: 8}
			if bc.alg != "" {
				cfg.DKIM, _ = dkimIdentity(b, bc.alg)
			}
			p, err := smtp.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = p.Close() })

			var seq atomic.Int64
			var failed atomic.Int64
			b.SetParallelism(4) // 4 × GOMAXPROCS senders, more than the 8 connections
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					out := email(fmt.Sprintf("0190f5a0-0000-7000-8000-%012d", seq.Add(1)))
					if o := p.Send(context.Background(), out); o.Class != engine.OutcomeAccepted {
						failed.Add(1)
					}
				}
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			if n := failed.Load(); n > 0 {
				b.Fatalf("%d sends not accepted", n)
			}
			if st := sink.Stats(); st.Messages != b.N || st.Duplicates != 0 {
				b.Fatalf("sink stats %+v after %d sends", st, b.N)
			}
		})
	}
}
