package peer

import (
	"context"
	"testing"
	"time"

	"switchboard/engine"
)

// waitConnected waits for n to report a connection from id.
func waitConnected(t *testing.T, n *node, id string) {
	t.Helper()
	timeout := time.After(testWait)
	for {
		select {
		case got := <-n.connected:
			if got == id {
				return
			}
		case <-timeout:
			t.Fatalf("no connection event for %s", id)
		}
	}
}

// TestReceiverDownThenStarts: a message to a peer that is down fails as transient; when the
// peer starts and a connection opens, the sender is told at once (the caller makes the
// peer's queued messages due then, not after the backoff), and the next attempt delivers.
func TestReceiverDownThenStarts(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	downID, err := IDFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	sender := startNode(t, func(c *Config) {
		c.AddressBook = map[string][]string{downID: {deadAddr(t)}}
	})
	out := peerOutbound(newMessageID(), downID, "wait for me")
	wantOutcome(t, sender.Send(context.Background(), out), engine.OutcomeTransient, CodeUnreachable)

	receiver := startNode(t, func(c *Config) {
		c.IdentityKey = key
		c.AddressBook = map[string][]string{sender.PeerID(): sender.Addrs()}
	})
	waitConnected(t, sender, receiver.PeerID())
	waitConnected(t, receiver, sender.PeerID())

	out.Attempt = 2
	o := sender.Send(context.Background(), out)
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	if entries, _ := receiver.inbox.snapshot(); len(entries) != 1 || entries[0].MessageID != out.MessageID {
		t.Fatalf("inbox %+v", entries)
	}
}

func TestCloseIsIdempotentAndStartAfterCloseFails(t *testing.T) {
	t.Parallel()
	p, err := New(Config{ID: "peers", IdentityKey: newKey(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := p.Start(context.Background()); err == nil {
		t.Fatal("Start after Close succeeded")
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	key := newKey(t)
	other, err := IDFromKey(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	self, err := IDFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	for name, cfg := range map[string]Config{
		"no key":             {},
		"garbage key":        {IdentityKey: []byte("not a key")},
		"bad listen":         {IdentityKey: key, Listen: []string{"127.0.0.1:4001"}},
		"relay without id":   {IdentityKey: key, Relays: []string{"/ip4/127.0.0.1/tcp/4001"}},
		"bad book id":        {IdentityKey: key, AddressBook: map[string][]string{"bob": {"/ip4/127.0.0.1/tcp/1"}}},
		"book names another": {IdentityKey: key, AddressBook: map[string][]string{other: {"/ip4/127.0.0.1/tcp/1/p2p/" + self}}},
		"bad protocol":       {IdentityKey: key, Protocol: "switchboard"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if p, err := New(cfg); err == nil {
				_ = p.Close()
				t.Fatal("New accepted it")
			}
		})
	}
}
