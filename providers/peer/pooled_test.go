package peer

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"

	"switchboard/engine"
)

// TestPooledDelivery: with the pooled mode on at both ends, concurrent sends all go on pooled
// streams (no more than PooledStreams of them), are stored once each, and a later send reuses
// an open stream.
func TestPooledDelivery(t *testing.T) {
	t.Parallel()
	var sent, got transportEvents
	receiver := startNode(t, pooled(&got))
	sender := senderTo(t, map[string][]string{receiver.PeerID(): receiver.Addrs()},
		both(pooled(&sent), func(c *Config) { c.PooledStreams = 3 }))
	const n = 40
	var wg sync.WaitGroup
	outcomes := make([]engine.Outcome, n)
	for i := range n {
		wg.Go(func() {
			outcomes[i] = sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), fmt.Sprint("pooled ", i)))
		})
	}
	wg.Wait()
	for i, o := range outcomes {
		if o.Class != engine.OutcomeAccepted || o.ProviderReference == "" {
			t.Fatalf("send %d: %+v", i, o)
		}
	}
	entries, _ := receiver.inbox.snapshot()
	if len(entries) != n {
		t.Fatalf("%d entries, want %d", len(entries), n)
	}
	for _, e := range entries {
		if e.Protocol != DefaultProtocol {
			t.Fatalf("entry stored under %q, want the one-shot id %q", e.Protocol, DefaultProtocol)
		}
	}
	opened := sent.count(EventStreamOpened)
	if opened < 1 || opened > 3 {
		t.Fatalf("%d pooled streams opened, want 1 to 3", opened)
	}
	wantOutcome(t, sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "again")),
		engine.OutcomeAccepted, "")
	if sent.count(EventSendPooled) != n+1 || sent.count(EventSendOneShot) != 0 || sent.count(EventFallback) != 0 {
		t.Fatalf("pooled %d, one-shot %d, fallbacks %d", sent.count(EventSendPooled), sent.count(EventSendOneShot), sent.count(EventFallback))
	}
	if again := sent.count(EventStreamOpened); again != opened {
		t.Fatalf("a later send opened a stream: %d, then %d", opened, again)
	}
}

// TestPooledReceiverFrames plays a peer that speaks only the pooled protocol against
// Switchboard's receiving side: many requests one after the other on one stream, PING
// answered with PONG, a duplicate answered from the inbox's record (whichever protocol
// carried the first copy), and an unreadable envelope answered with an ERROR frame that
// leaves the stream usable.
func TestPooledReceiverFrames(t *testing.T) {
	t.Parallel()
	var ev transportEvents
	receiver := startNode(t, pooled(&ev))
	h := rawHost(t, nil, false)
	s, fr := dialPooled(t, h, receiver)
	defer func() { _ = s.Close() }()

	if typ, payload := exchangeFrame(t, s, fr, FramePing, nil); typ != FramePong || len(payload) != 0 {
		t.Fatalf("ping answered with %s %q", typ, payload)
	}
	ids := []string{newMessageID(), newMessageID(), newMessageID()}
	answers := map[string][]byte{}
	for _, id := range ids {
		typ, answer := exchangeFrame(t, s, fr, FrameRequest, AppendEnvelope(nil, Envelope{MessageID: id, Version: 1, Payload: []byte(id)}))
		if typ != FrameResponse || !bytes.HasPrefix(answer, []byte(`{"accepted":true,"inboxId":"`)) {
			t.Fatalf("request %s answered with %s %q", id, typ, answer)
		}
		answers[id] = answer
	}
	// The same envelope again, on the pooled stream and one-shot: the first answer both times.
	dup := AppendEnvelope(nil, Envelope{MessageID: ids[1], Version: 1, Payload: []byte("changed")})
	if typ, answer := exchangeFrame(t, s, fr, FrameRequest, dup); typ != FrameResponse || !bytes.Equal(answer, answers[ids[1]]) {
		t.Fatalf("pooled duplicate answered with %s %q, want %q", typ, answer, answers[ids[1]])
	}
	if answer := roundTrip(t, h, receiver, dup); !bytes.Equal(answer, answers[ids[1]]) {
		t.Fatalf("one-shot duplicate answered with %q, want %q", answer, answers[ids[1]])
	}
	// And the other way round: first one-shot, then pooled.
	first := AppendEnvelope(nil, Envelope{MessageID: newMessageID(), Version: 1})
	oneShotAnswer := roundTrip(t, h, receiver, first)
	if typ, answer := exchangeFrame(t, s, fr, FrameRequest, first); typ != FrameResponse || !bytes.Equal(answer, oneShotAnswer) {
		t.Fatalf("pooled copy of a one-shot envelope answered with %s %q, want %q", typ, answer, oneShotAnswer)
	}
	if typ, text := exchangeFrame(t, s, fr, FrameRequest, []byte("not an envelope")); typ != FrameError || !strings.Contains(string(text), "ReliableEnvelope") {
		t.Fatalf("garbage answered with %s %q", typ, text)
	}
	if typ, _ := exchangeFrame(t, s, fr, FramePing, nil); typ != FramePong {
		t.Fatalf("stream unusable after an ERROR frame: %s", typ)
	}
	if entries, _ := receiver.inbox.snapshot(); len(entries) != 4 {
		t.Fatalf("%d entries, want 4", len(entries))
	}
}

// TestPooledReceiverGate: a sender not allowed, or over its per-minute quota, is refused from
// the frame's header, the payload skipped, and the stream goes on.
func TestPooledReceiverGate(t *testing.T) {
	t.Parallel()
	var ev transportEvents
	var mu sync.Mutex
	var refused []string
	allowed := rawHost(t, nil, false)
	receiver := startNode(t, both(pooled(&ev), func(c *Config) {
		c.AnyPeer = false
		c.AllowedPeers = []string{allowed.ID().String()}
		c.MessagesPerMinute = 1
		c.OnRefused = func(code string) { mu.Lock(); refused = append(refused, code); mu.Unlock() }
	}))
	stranger := rawHost(t, nil, false)
	s, fr := dialPooled(t, stranger, receiver)
	env := func() []byte {
		return AppendEnvelope(nil, Envelope{MessageID: newMessageID(), Version: 1, Payload: make([]byte, 4096)})
	}
	if typ, answer := exchangeFrame(t, s, fr, FrameRequest, env()); typ != FrameResponse || string(answer) != string(refusal(CodeNotAllowed)) {
		t.Fatalf("stranger answered with %s %q", typ, answer)
	}
	if typ, _ := exchangeFrame(t, s, fr, FramePing, nil); typ != FramePong {
		t.Fatal("stream unusable after a refusal")
	}
	s, fr = dialPooled(t, allowed, receiver)
	if typ, answer := exchangeFrame(t, s, fr, FrameRequest, env()); typ != FrameResponse || !bytes.Contains(answer, []byte(`"accepted":true`)) {
		t.Fatalf("first envelope answered with %s %q", typ, answer)
	}
	if typ, answer := exchangeFrame(t, s, fr, FrameRequest, env()); typ != FrameResponse || string(answer) != string(refusal(CodeOverQuota)) {
		t.Fatalf("second envelope in the minute answered with %s %q", typ, answer)
	}
	entries, puts := receiver.inbox.snapshot()
	if len(entries) != 1 || puts != 1 {
		t.Fatalf("%d entries, %d puts; want 1, 1", len(entries), puts)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(refused, ",") != CodeNotAllowed+","+CodeOverQuota {
		t.Fatalf("refusals %v", refused)
	}
}

// TestPooledFallsBackToOneShot: a receiver that speaks only the one-shot protocol gets every
// message one-shot; the sender finds out once and remembers it.
func TestPooledFallsBackToOneShot(t *testing.T) {
	t.Parallel()
	receiver := startNode(t, nil) // one-shot only
	var ev transportEvents
	sender := senderTo(t, map[string][]string{receiver.PeerID(): receiver.Addrs()}, pooled(&ev))
	for i := range 5 {
		wantOutcome(t, sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), fmt.Sprint(i))),
			engine.OutcomeAccepted, "")
	}
	if entries, _ := receiver.inbox.snapshot(); len(entries) != 5 {
		t.Fatalf("%d entries, want 5", len(entries))
	}
	if ev.count(EventFallback) != 1 || ev.count(EventSendOneShot) != 5 || ev.count(EventSendPooled) != 0 || ev.count(EventStreamOpened) != 0 {
		t.Fatalf("fallbacks %d, one-shot %d, pooled %d, streams %d",
			ev.count(EventFallback), ev.count(EventSendOneShot), ev.count(EventSendPooled), ev.count(EventStreamOpened))
	}
}

// TestPooledOnlyPeer: Switchboard's sending side against a peer that speaks only the pooled
// protocol, implemented here from the frame format alone.
func TestPooledOnlyPeer(t *testing.T) {
	t.Parallel()
	pp := startPooledOnlyPeer(t, func(env Envelope) (FrameType, []byte, bool) {
		return FrameResponse, []byte(`{"accepted":true,"inboxId":"` + env.MessageID + `"}`), true
	})
	var ev transportEvents
	sender := senderTo(t, map[string][]string{pp.ID().String(): hostAddrs(pp.Host)}, pooled(&ev))
	for range 3 {
		id := newMessageID()
		o := sender.Send(context.Background(), peerOutbound(id, pp.ID().String(), "hello"))
		if o.Class != engine.OutcomeAccepted || o.ProviderReference != id {
			t.Fatalf("send: %+v", o)
		}
	}
	if got := len(pp.read); got != 3 {
		t.Fatalf("peer read %d frames, want three requests on its stream", got)
	}
	if ev.count(EventStreamOpened) != 1 {
		t.Fatalf("%d streams opened, want 1", ev.count(EventStreamOpened))
	}
}

// TestPooledErrorFrame: an ERROR frame ends that request as transient and leaves the stream
// for the next one.
func TestPooledErrorFrame(t *testing.T) {
	t.Parallel()
	var calls int
	pp := startPooledOnlyPeer(t, func(Envelope) (FrameType, []byte, bool) {
		calls++
		if calls == 1 {
			return FrameError, []byte("handler failed"), true
		}
		return FrameResponse, []byte(ResponseGone), true
	})
	var ev transportEvents
	sender := senderTo(t, map[string][]string{pp.ID().String(): hostAddrs(pp.Host)}, pooled(&ev))
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), pp.ID().String(), "x"))
	wantOutcome(t, o, engine.OutcomeTransient, CodeRemoteError)
	if !strings.Contains(o.Reason, "handler failed") {
		t.Fatalf("reason %q", o.Reason)
	}
	wantOutcome(t, sender.Send(context.Background(), peerOutbound(newMessageID(), pp.ID().String(), "y")), engine.OutcomeAccepted, "")
	if ev.count(EventStreamOpened) != 1 || ev.count(EventStreamReset) != 0 {
		t.Fatalf("streams %d, resets %d", ev.count(EventStreamOpened), ev.count(EventStreamReset))
	}
}

// TestPooledStreamResetFailsEveryRequest: when the stream breaks under a request, that request
// and every one queued behind it end transient, never definite, and the next send opens a
// fresh stream.
func TestPooledStreamResetFailsEveryRequest(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	var drop sync.Once
	pp := startPooledOnlyPeer(t, func(Envelope) (FrameType, []byte, bool) {
		first := false
		drop.Do(func() { first = true })
		if first {
			arrived <- struct{}{}
			<-release
			return 0, nil, false // reset the stream under the first request
		}
		return FrameResponse, []byte(ResponseGone), true
	})
	var ev transportEvents
	sender := senderTo(t, map[string][]string{pp.ID().String(): hostAddrs(pp.Host)},
		both(pooled(&ev), func(c *Config) { c.PooledStreams = 1 }))
	const n = 5
	outcomes := make(chan engine.Outcome, n)
	send := func() {
		outcomes <- sender.Send(context.Background(), peerOutbound(newMessageID(), pp.ID().String(), "q"))
	}
	go send()
	<-arrived
	for range n - 1 {
		go send()
	}
	// Let the queued sends reach the stream before it breaks.
	waitQueued(t, sender.Provider, pp.ID(), n)
	close(release)
	for range n {
		o := <-outcomes
		if o.Class != engine.OutcomeTransient || o.Code != CodeStreamReset {
			t.Fatalf("outcome %+v, want transient %s", o, CodeStreamReset)
		}
	}
	if ev.count(EventStreamReset) != 1 {
		t.Fatalf("%d resets, want 1", ev.count(EventStreamReset))
	}
	wantOutcome(t, sender.Send(context.Background(), peerOutbound(newMessageID(), pp.ID().String(), "after")), engine.OutcomeAccepted, "")
	if ev.count(EventStreamOpened) != 2 {
		t.Fatalf("%d streams opened, want 2", ev.count(EventStreamOpened))
	}
}

// TestPooledRequestTimeout: a peer that never answers costs RequestTimeout, and the request
// ends transient.
func TestPooledRequestTimeout(t *testing.T) {
	t.Parallel()
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	pp := startPooledOnlyPeer(t, func(Envelope) (FrameType, []byte, bool) {
		<-hold
		return 0, nil, false
	})
	var ev transportEvents
	sender := senderTo(t, map[string][]string{pp.ID().String(): hostAddrs(pp.Host)},
		both(pooled(&ev), func(c *Config) { c.RequestTimeout = 300 * time.Millisecond }))
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), pp.ID().String(), "x"))
	wantOutcome(t, o, engine.OutcomeTransient, CodeTimeout)
}

// TestPooledKeepaliveAndIdleClose: an unused stream is pinged on each keepalive tick and
// closed after IdleClose; the next send opens a fresh one.
func TestPooledKeepaliveAndIdleClose(t *testing.T) {
	t.Parallel()
	pp := startPooledOnlyPeer(t, func(Envelope) (FrameType, []byte, bool) {
		return FrameResponse, []byte(ResponseGone), true
	})
	ticker := newManualTicker()
	var ev transportEvents
	sender := senderTo(t, map[string][]string{pp.ID().String(): hostAddrs(pp.Host)}, both(pooled(&ev), func(c *Config) {
		c.NewTicker = ticker.newTicker
		c.Keepalive = 10 * time.Second
		c.IdleClose = 30 * time.Second // three ticks
	}))
	wantOutcome(t, sender.Send(context.Background(), peerOutbound(newMessageID(), pp.ID().String(), "x")), engine.OutcomeAccepted, "")
	ticker.tick(t) // the tick after a request: used, no ping
	ticker.tick(t) // idle: a ping
	ticker.tick(t) // idle: a ping
	for _, want := range []FrameType{FrameRequest, FramePing, FramePing} {
		select {
		case got := <-pp.read:
			if got != want {
				t.Fatalf("peer read %s, want %s", got, want)
			}
		case <-time.After(testWait):
			t.Fatalf("peer read no %s", want)
		}
	}
	ticker.tick(t) // the third idle tick: closed
	select {
	case err := <-pp.ended:
		if err != nil {
			t.Fatalf("stream ended with %v, want a clean close", err)
		}
	case <-time.After(testWait):
		t.Fatal("the idle stream was not closed")
	}
	wantOutcome(t, sender.Send(context.Background(), peerOutbound(newMessageID(), pp.ID().String(), "y")), engine.OutcomeAccepted, "")
	if ev.count(EventStreamOpened) != 2 || ev.count(EventStreamReset) != 0 {
		t.Fatalf("streams %d, resets %d", ev.count(EventStreamOpened), ev.count(EventStreamReset))
	}
}

// waitQueued waits until n requests are queued on or in flight on the streams to id.
func waitQueued(t *testing.T, p *Provider, id libp2ppeer.ID, n int) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for got := p.pool.queued(id); got != n; got = p.pool.queued(id) {
		if time.Now().After(deadline) {
			t.Fatalf("%d requests queued, want %d", got, n)
		}
		time.Sleep(time.Millisecond) // polling the pool's count, not timing the code under test
	}
}

// TestPooledSenderKilledAfterWriting: a sender writes a REQUEST frame and dies before the
// RESPONSE. The receiver keeps the message once; the sender, back with the same identity,
// sends it again on a fresh pooled stream and gets the cached answer, without a second entry.
func TestPooledSenderKilledAfterWriting(t *testing.T) {
	t.Parallel()
	var got transportEvents
	receiver := startNode(t, pooled(&got))
	key := newKey(t)
	id := newMessageID()
	doomed := rawHost(t, key, false)
	s, _ := dialPooled(t, doomed, receiver)
	if _, err := s.Write(AppendFrame(nil, FrameRequest, AppendEnvelope(nil, Envelope{MessageID: id, Version: 1, Payload: []byte("once")}))); err != nil {
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
	var ev transportEvents
	revived := startNode(t, both(pooled(&ev), func(c *Config) {
		c.IdentityKey = key
		c.Listen = nil
		c.AddressBook = map[string][]string{receiver.PeerID(): receiver.Addrs()}
	}))
	o := revived.Send(context.Background(), peerOutbound(id, receiver.PeerID(), "once"))
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	entries, puts := receiver.inbox.snapshot()
	if len(entries) != 1 || puts != 2 || o.ProviderReference != entries[0].ID {
		t.Fatalf("%d entries after %d puts, reference %q; want one entry, answered from its record", len(entries), puts, o.ProviderReference)
	}
	if ev.count(EventSendPooled) != 1 {
		t.Fatalf("%d pooled sends, want 1", ev.count(EventSendPooled))
	}
}
