package peer

import (
	"bytes"
	"context"
	"testing"
	"time"

	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"

	"switchboard/engine"
)

// relayed is a relay, a receiver with no listen address of its own that holds a reservation
// on it, and a sender.
type relayed struct {
	relay, receiver, sender *node
}

// startRelayed builds the relay topology. With viaAddressBook the sender knows the receiver
// by its /p2p-circuit address; otherwise the sender only has the relay configured and finds
// the receiver through it.
func startRelayed(t testing.TB, viaAddressBook bool) relayed {
	t.Helper()
	relay := startNode(t, func(c *Config) { c.RelayService = true; c.Inbox = nil })
	relayAddr := relay.Addrs()[0]
	receiver := startNode(t, func(c *Config) {
		c.Listen = nil
		c.Relays = []string{relayAddr}
	})
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	if err := receiver.WaitReservation(ctx, relay.PeerID()); err != nil {
		t.Fatal(err)
	}
	sender := startNode(t, func(c *Config) {
		c.Listen = nil
		if viaAddressBook {
			c.AddressBook = map[string][]string{
				receiver.PeerID(): {relayAddr + "/p2p-circuit/p2p/" + receiver.PeerID()},
			}
		} else {
			c.Relays = []string{relayAddr}
		}
	})
	return relayed{relay: relay, receiver: receiver, sender: sender}
}

// wantRelayedOnly checks that every connection from sender to receiver is a limited
// (relayed) one: the receiver has no address of its own, so nothing else is possible.
func wantRelayedOnly(t *testing.T, r relayed) {
	t.Helper()
	id, err := libp2ppeer.Decode(r.receiver.PeerID())
	if err != nil {
		t.Fatal(err)
	}
	conns := r.sender.host.Network().ConnsToPeer(id)
	if len(conns) == 0 {
		t.Fatal("no connection from sender to receiver")
	}
	for _, c := range conns {
		if !c.Stat().Limited || !isCircuit(c.RemoteMultiaddr()) {
			t.Fatalf("connection %s is not relayed", c.RemoteMultiaddr())
		}
	}
}

func TestDeliveryThroughRelay(t *testing.T) {
	t.Parallel()
	for name, viaAddressBook := range map[string]bool{"address book": true, "configured relay": false} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := startRelayed(t, viaAddressBook)
			if len(r.receiver.Addrs()) != 0 {
				t.Fatalf("receiver listens on %v, want nothing", r.receiver.Addrs())
			}
			out := peerOutbound(newMessageID(), r.receiver.PeerID(), "through the relay")
			o := r.sender.Send(context.Background(), out)
			wantOutcome(t, o, engine.OutcomeAccepted, "")
			wantRelayedOnly(t, r)
			entries, _ := r.receiver.inbox.snapshot()
			if len(entries) != 1 || string(entries[0].Payload) != "through the relay" ||
				entries[0].From != r.sender.PeerID() || o.ProviderReference != entries[0].ID {
				t.Fatalf("inbox %+v after %+v", entries, o)
			}
		})
	}
}

func TestLargePayloadThroughRelay(t *testing.T) {
	t.Parallel()
	r := startRelayed(t, true)
	body := bytes.Repeat([]byte("0123456789abcdef"), 9<<20/16) // 9 MiB
	out := peerOutbound(newMessageID(), r.receiver.PeerID(), string(body))
	o := r.sender.Send(context.Background(), out)
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	wantRelayedOnly(t, r)
	entries, _ := r.receiver.inbox.snapshot()
	if len(entries) != 1 || !bytes.Equal(entries[0].Payload, body) {
		t.Fatalf("inbox holds %d entries; payload intact: %v", len(entries),
			len(entries) == 1 && bytes.Equal(entries[0].Payload, body))
	}
}

func TestRelayWithoutReservationIsTransient(t *testing.T) {
	t.Parallel()
	relay := startNode(t, func(c *Config) { c.RelayService = true; c.Inbox = nil })
	absent := startNode(t, func(c *Config) { c.Listen = nil }) // holds no reservation
	sender := startNode(t, func(c *Config) {
		c.Listen = nil
		c.Relays = []string{relay.Addrs()[0]}
	})
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), absent.PeerID(), "nobody home"))
	wantOutcome(t, o, engine.OutcomeTransient, CodeUnreachable)
}

// TestReservationComesBackAfterTheRelayConnectionCloses: when the connection that carries a
// reservation closes, the host reserves again at once, not at the renewal time.
func TestReservationComesBackAfterTheRelayConnectionCloses(t *testing.T) {
	t.Parallel()
	r := startRelayed(t, true)
	relayID, err := libp2ppeer.Decode(r.relay.PeerID())
	if err != nil {
		t.Fatal(err)
	}
	rsv := r.receiver.reservationFor(relayID)
	active, watch := rsv.state()
	if !active {
		t.Fatal("no reservation to start with")
	}
	if err := r.receiver.host.Network().ClosePeer(relayID); err != nil {
		t.Fatal(err)
	}
	select {
	case <-watch: // the loop saw the reservation go
	case <-time.After(testWait):
		t.Fatal("the reservation was not dropped with its connection")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	// The relay may handle the old connection's close after the new reservation, and drop it;
	// the reservation loop then makes another. A send in that gap is transient, which the
	// dispatcher retries: so does this test, until the deadline.
	var o engine.Outcome
	for {
		if err := r.receiver.WaitReservation(ctx, r.relay.PeerID()); err != nil {
			t.Fatal(err)
		}
		o = r.sender.Send(context.Background(), peerOutbound(newMessageID(), r.receiver.PeerID(), "again"))
		if o.Class != engine.OutcomeTransient || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	wantOutcome(t, o, engine.OutcomeAccepted, "")
}

func TestRenewIn(t *testing.T) {
	t.Parallel()
	for left, want := range map[time.Duration]time.Duration{
		time.Hour:        55 * time.Minute,
		10 * time.Minute: 5 * time.Minute,
		4 * time.Minute:  2 * time.Minute,
		time.Second:      reserveRetryMin,
		-time.Minute:     reserveRetryMin,
	} {
		if got := renewIn(left); got != want {
			t.Errorf("renewIn(%s) = %s, want %s", left, got, want)
		}
	}
}
