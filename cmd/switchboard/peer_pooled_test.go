package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/providers/peer"
)

// TestPeerPooledWithTheStore runs the quickstart's peer provider as serve builds it with
// pooledProtocol set, on the real SQLite store: a sender speaking the pooled protocol and one
// speaking only one-shot deliver into the same inbox, and a message sent twice on a pooled
// stream, then once more one-shot by the same identity, is stored once and answered with the
// same inbox id each time.
func TestPeerPooledWithTheStore(t *testing.T) {
	t.Parallel()
	const pooledID = "/switchboard/2.0.0/message"
	e := newAPIEnv(t, envOptions{runtime: func(doc map[string]any) {
		p := doc["providers"].(map[string]any)["peers"].(map[string]any)
		p["allowedPeers"] = "any"
		p["pooledProtocol"] = pooledID
	}})
	receiver := e.stack.providers["peers"].(*peer.Provider)
	if err := receiver.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	newKey := func() []byte {
		path := filepath.Join(t.TempDir(), "peer.key")
		if err := peer.Keygen(path); err != nil {
			t.Fatal(err)
		}
		return readFile(t, path)
	}
	newSender := func(key []byte, pooled string, events *[6]atomic.Int64) *peer.Provider {
		p, err := peer.New(peer.Config{ID: "sender", IdentityKey: key, Logger: slog.New(slog.DiscardHandler),
			AddressBook:    map[string][]string{receiver.PeerID(): receiver.Addrs()},
			PooledProtocol: pooled, OnTransport: func(ev peer.TransportEvent) { events[ev].Add(1) }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		if err := p.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var pooledEvents, oneShotEvents, twinEvents [6]atomic.Int64
	pooledKey := newKey()
	pooledSender, oneShotSender := newSender(pooledKey, pooledID, &pooledEvents), newSender(newKey(), "", &oneShotEvents)
	send := func(from *peer.Provider, id string) engine.Outcome {
		t.Helper()
		o := from.Send(context.Background(), &engine.Outbound{MessageID: id, Generation: 1, Attempt: 1,
			Channel: engine.ChannelPeer, Recipient: receiver.PeerID(), Parts: map[string]string{"body": "hi " + id},
			ContentType: "text/plain", Deadline: time.Now().Add(20 * time.Second)})
		if o.Class != engine.OutcomeAccepted || o.ProviderReference == "" {
			t.Fatalf("send %s: %+v", id, o)
		}
		return o
	}
	const first, second = "0190f5a0-0000-7000-8000-000000000101", "0190f5a0-0000-7000-8000-000000000102"
	a := send(pooledSender, first)
	if again := send(pooledSender, first); again.ProviderReference != a.ProviderReference {
		t.Fatalf("pooled duplicate answered %q, want %q", again.ProviderReference, a.ProviderReference)
	}
	b := send(oneShotSender, second)
	if a.ProviderReference == b.ProviderReference {
		t.Fatal("two messages share an inbox id")
	}
	// The pooled sender's message again, from the same identity speaking only one-shot.
	if err := pooledSender.Close(); err != nil {
		t.Fatal(err)
	}
	twin := newSender(pooledKey, "", &twinEvents)
	if again := send(twin, first); again.ProviderReference != a.ProviderReference || twinEvents[peer.EventSendOneShot].Load() != 1 {
		t.Fatalf("one-shot copy of a pooled message answered %q, want %q", again.ProviderReference, a.ProviderReference)
	}
	if pooledEvents[peer.EventSendPooled].Load() != 2 || pooledEvents[peer.EventStreamOpened].Load() != 1 ||
		oneShotEvents[peer.EventSendOneShot].Load() != 1 {
		t.Fatal("the pooled sender did not send pooled on one stream, or the one-shot sender not one-shot")
	}
	entries, _, err := e.stack.store.ListInbox(context.Background(), "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d inbox entries, want 2", len(entries))
	}
	for _, en := range entries {
		if en.Protocol != "/switchboard/1.0.0/message" {
			t.Fatalf("entry stored under %q, want the one-shot id", en.Protocol)
		}
	}
}
