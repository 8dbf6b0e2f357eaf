package peer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"switchboard/engine"
)

// TestPooledThroughRelay: pooled streams through a circuit relay carry messages.
func TestPooledThroughRelay(t *testing.T) {
	t.Parallel()
	var ev transportEvents
	r := startPooledRelayed(t, 0, &ev)
	for range 10 {
		wantOutcome(t, r.sender.Send(context.Background(), peerOutbound(newMessageID(), r.receiver.PeerID(), "relayed")),
			engine.OutcomeAccepted, "")
	}
	wantRelayedOnly(t, r)
	if ev.count(EventSendPooled) != 10 || ev.count(EventStreamOpened) != 1 {
		t.Fatalf("pooled sends %d, streams %d", ev.count(EventSendPooled), ev.count(EventStreamOpened))
	}
}

// TestPooledRelayResets: a relay whose circuits carry only a few KiB resets the relayed
// connection under the pooled streams again and again. Sending every message until it is
// accepted, as the dispatcher's retries do, ends with each stored exactly once: the requests a
// reset failed are transient, and a resend of one the receiver had stored is answered from its
// inbox record.
func TestPooledRelayResets(t *testing.T) {
	t.Parallel()
	var ev transportEvents
	r := startPooledRelayed(t, 24<<10, &ev)
	const messages, senders, attempts = 60, 4, 50
	body := strings.Repeat("r", 1024)
	ids := make(chan string, messages)
	for range messages {
		ids <- newMessageID()
	}
	close(ids)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	for range senders {
		wg.Go(func() {
			for id := range ids {
				var o engine.Outcome
				for range attempts {
					o = r.sender.Send(context.Background(), peerOutbound(id, r.receiver.PeerID(), body))
					if o.Class != engine.OutcomeTransient {
						break
					}
				}
				if o.Class != engine.OutcomeAccepted {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: %+v", id, o))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d messages not accepted, the first: %s", len(failures), failures[0])
	}
	entries, puts := r.receiver.inbox.snapshot()
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.MessageID] {
			t.Fatalf("message %s stored twice", e.MessageID)
		}
		seen[e.MessageID] = true
	}
	if len(entries) != messages {
		t.Fatalf("%d messages stored, want %d", len(entries), messages)
	}
	if ev.count(EventStreamReset) == 0 {
		t.Fatal("the relay never reset a circuit: the test proves nothing")
	}
	t.Logf("%d puts for %d messages, %d stream resets, %d streams opened",
		puts, messages, ev.count(EventStreamReset), ev.count(EventStreamOpened))
}

// startPooledRelayed is startRelayed with the pooled mode on at both ends and, when
// circuitBytes is not zero, a relay whose circuits carry that much each way.
func startPooledRelayed(t *testing.T, circuitBytes int64, ev *transportEvents) relayed {
	t.Helper()
	relay := startNode(t, func(c *Config) { c.RelayService = true; c.Inbox = nil; c.RelayCircuitBytes = circuitBytes })
	relayAddr := relay.Addrs()[0]
	var got transportEvents
	receiver := startNode(t, both(pooled(&got), func(c *Config) {
		c.Listen = nil
		c.Relays = []string{relayAddr}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	if err := receiver.WaitReservation(ctx, relay.PeerID()); err != nil {
		t.Fatal(err)
	}
	sender := senderTo(t, map[string][]string{
		receiver.PeerID(): {relayAddr + "/p2p-circuit/p2p/" + receiver.PeerID()},
	}, pooled(ev))
	return relayed{relay: relay, receiver: receiver, sender: sender}
}
