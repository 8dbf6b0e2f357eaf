package peer

import (
	"context"
	"strings"
	"testing"

	"switchboard/engine"
)

// BenchmarkSend measures messages per second between two hosts on loopback with 1 KiB
// payloads, each a full send (fresh stream, envelope, stored in the receiver's inbox,
// acknowledgement read back), directly and through a relay. Senders run in parallel
// (GOMAXPROCS × 8 goroutines), as the dispatcher's workers do.
//
//	go test ./providers/peer -run '^$' -bench BenchmarkSend -benchtime 3s
func BenchmarkSend(b *testing.B) {
	body := strings.Repeat("x", 1024)
	run := func(b *testing.B, sender, receiver *node) {
		receiver.inbox.dropPayloads = true
		// Warm up: the first send opens the connection.
		if o := sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), body)); o.Class != engine.OutcomeAccepted {
			b.Fatalf("warm-up send: %+v", o)
		}
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				o := sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), body))
				if o.Class != engine.OutcomeAccepted {
					b.Errorf("send: %+v", o)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	}
	b.Run("direct", func(b *testing.B) {
		receiver := startNode(b, nil)
		sender := startNode(b, func(c *Config) {
			c.Listen = nil
			c.AddressBook = map[string][]string{receiver.PeerID(): receiver.Addrs()}
		})
		run(b, sender, receiver)
	})
	b.Run("relay", func(b *testing.B) {
		r := startRelayed(b, true)
		run(b, r.sender, r.receiver)
	})
}
