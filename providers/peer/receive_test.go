package peer

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"switchboard/engine"
)

// wantReset writes request on a fresh stream to receiver (closing the write side unless
// stall) and checks the receiver breaks the stream without an answer and stores nothing.
func wantReset(t *testing.T, receiver *node, request []byte, stall bool) {
	t.Helper()
	h := rawHost(t, nil, false)
	s := openStream(t, h, receiver)
	defer func() { _ = s.Reset() }()
	// The receiver may reset while an oversize request is still being written.
	if _, err := s.Write(request); err != nil && len(request) <= MaxEnvelopeBytes {
		t.Fatalf("write: %v", err)
	}
	if !stall {
		_ = s.CloseWrite()
	}
	answer, err := io.ReadAll(s)
	if err == nil {
		t.Fatalf("stream ended cleanly with answer %q, want a reset", answer)
	}
	if entries, _ := receiver.inbox.snapshot(); len(entries) != 0 {
		t.Fatalf("inbox holds %d entries, want none", len(entries))
	}
}

// wantHealthy checks the receiver still takes a real message after abuse.
func wantHealthy(t *testing.T, receiver *node) {
	t.Helper()
	sender := startNode(t, func(c *Config) {
		c.Listen = nil
		c.AddressBook = map[string][]string{receiver.PeerID(): receiver.Addrs()}
	})
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "still here"))
	wantOutcome(t, o, engine.OutcomeAccepted, "")
}

func TestReceiverResetsBadStreams(t *testing.T) {
	t.Parallel()
	valid := func(e Envelope) []byte { return AppendEnvelope(nil, e) }
	cases := map[string][]byte{
		"garbage":          []byte("GET / HTTP/1.1\r\nHost: example\r\n\r\n"),
		"empty":            {},
		"truncated":        valid(Envelope{MessageID: "m-1", Version: 1, Payload: []byte("abc")})[:8],
		"version 2":        valid(Envelope{MessageID: "m-1", Version: 2, Payload: []byte("abc")}),
		"empty message id": valid(Envelope{Version: 1, Payload: []byte("abc")}),
		"over the cap":     bytes.Repeat([]byte{0}, MaxEnvelopeBytes+1),
		"large garbage":    bytes.Repeat([]byte{0xff}, 1<<20),
	}
	for name, request := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			receiver := startNode(t, nil)
			wantReset(t, receiver, request, false)
			wantHealthy(t, receiver)
		})
	}
}

func TestReceiverResetsStalledSender(t *testing.T) {
	t.Parallel()
	receiver := startNode(t, func(c *Config) { c.ReceiveTimeout = 300 * time.Millisecond; c.MaxInbound = 1 })
	start := time.Now()
	// Half an envelope, then silence: the receiver's deadline must end it.
	half := AppendEnvelope(nil, Envelope{MessageID: "m-1", Version: 1, Payload: []byte("abcdef")})[:10]
	wantReset(t, receiver, half, true)
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("the stalled stream lasted %s", waited)
	}
	// The one inbound slot is free again.
	wantHealthy(t, receiver)
}

func TestInboxFailureResetsAndIsNotDelivered(t *testing.T) {
	t.Parallel()
	receiver := startNode(t, func(c *Config) { c.ReceiveTimeout = 300 * time.Millisecond })
	receiver.inbox.gate = make(chan struct{}) // never opens: PutInbox ends with the deadline
	sender := startNode(t, func(c *Config) {
		c.Listen = nil
		c.AddressBook = map[string][]string{receiver.PeerID(): receiver.Addrs()}
	})
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "x"))
	wantOutcome(t, o, engine.OutcomeMaybeSent, CodeStreamFailed)
	if entries, _ := receiver.inbox.snapshot(); len(entries) != 0 {
		t.Fatalf("inbox holds %d entries", len(entries))
	}
}

func TestSenderGivesUpAfterWritingIsMaybeSent(t *testing.T) {
	t.Parallel()
	receiver := startNode(t, nil)
	receiver.inbox.gate = make(chan struct{})
	t.Cleanup(func() { close(receiver.inbox.gate) })
	sender := startNode(t, func(c *Config) {
		c.Listen = nil
		c.AddressBook = map[string][]string{receiver.PeerID(): receiver.Addrs()}
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-receiver.inbox.putSeen // the receiver has the whole envelope
		cancel()
	}()
	o := sender.Send(ctx, peerOutbound(newMessageID(), receiver.PeerID(), "x"))
	wantOutcome(t, o, engine.OutcomeMaybeSent, CodeTimeout)
}

// TestSenderKilledAfterWriting: a sender writes the envelope and dies before the answer.
// The receiver keeps the message once; the sender, back with the same identity, sends the
// same message again (a settle as not-sent, or onUncertain: retry) and gets the cached answer
// without a second delivery.
func TestSenderKilledAfterWriting(t *testing.T) {
	t.Parallel()
	receiver := startNode(t, nil)
	key := newKey(t)
	id := newMessageID()
	env := AppendEnvelope(nil, Envelope{MessageID: id, Version: 1, TsMs: 1, Payload: []byte("once")})

	doomed := rawHost(t, key, false)
	s := openStream(t, doomed, receiver)
	if _, err := s.Write(env); err != nil {
		t.Fatal(err)
	}
	if err := s.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-receiver.inbox.putSeen:
	case <-time.After(testWait):
		t.Fatal("the receiver never stored the envelope")
	}
	if err := doomed.Close(); err != nil { // killed: the answer is never read
		t.Fatal(err)
	}

	revived := startNode(t, func(c *Config) {
		c.IdentityKey = key
		c.Listen = nil
		c.AddressBook = map[string][]string{receiver.PeerID(): receiver.Addrs()}
	})
	o := revived.Send(context.Background(), peerOutbound(id, receiver.PeerID(), "once"))
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	entries, puts := receiver.inbox.snapshot()
	if len(entries) != 1 || puts != 2 || o.ProviderReference != entries[0].ID {
		t.Fatalf("%d entries after %d puts, answer %+v", len(entries), puts, o)
	}
}
