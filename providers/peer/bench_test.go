package peer

import (
	"context"
	"strings"
	"testing"

	"switchboard/engine"
)

// BenchmarkSend measures messages per second between two hosts on loopback with 1 KiB
// payloads, each a full send (envelope, stored in the receiver's inbox, acknowledgement read
// back), directly and through a relay: one-shot (a fresh stream per message), and pooled with
// 1, 4 and 8 streams per peer at most. Senders run in parallel (GOMAXPROCS × 8 goroutines), as
// the dispatcher's workers do.
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
	modes := []struct {
		name    string
		streams int // 0: one-shot
	}{{"one-shot", 0}, {"pooled-1", 1}, {"pooled-4", 4}, {"pooled-8", 8}}
	for _, m := range modes {
		mode := func(c *Config) {
			if m.streams > 0 {
				c.PooledProtocol, c.PooledStreams = testPooledProtocol, m.streams
			}
		}
		b.Run("direct/"+m.name, func(b *testing.B) {
			receiver := startNode(b, mode)
			sender := senderTo(b, map[string][]string{receiver.PeerID(): receiver.Addrs()}, mode)
			run(b, sender, receiver)
		})
		b.Run("relay/"+m.name, func(b *testing.B) {
			relay := startNode(b, func(c *Config) { c.RelayService = true; c.Inbox = nil })
			receiver := startNode(b, both(mode, func(c *Config) { c.Listen, c.Relays = nil, []string{relay.Addrs()[0]} }))
			ctx, cancel := context.WithTimeout(context.Background(), testWait)
			defer cancel()
			if err := receiver.WaitReservation(ctx, relay.PeerID()); err != nil {
				b.Fatal(err)
			}
			sender := senderTo(b, map[string][]string{
				receiver.PeerID(): {relay.Addrs()[0] + "/p2p-circuit/p2p/" + receiver.PeerID()},
			}, mode)
			run(b, sender, receiver)
		})
	}
}
