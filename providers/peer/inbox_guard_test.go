package peer

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"

	"switchboard/engine"
	"switchboard/engine/enginetest"
)

// mustID is the peer id of a marshalled identity key.
func mustID(t *testing.T, key []byte) string {
	t.Helper()
	id, err := IDFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// refusals records the codes a receiver's OnRefused was told.
type refusals struct {
	mu    sync.Mutex
	codes []string
}

func (r *refusals) add(code string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.codes = append(r.codes, code)
}

func (r *refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.codes...)
}

// wantRefused checks that o is the sender's outcome for a refusal with code.
// wantRefused checks a receiver's refusal with code as the sender records it: peer.over-quota
// is transient (tried again after a minute), any other refusal permanent peer.refused.
func wantRefused(t *testing.T, o engine.Outcome, code string) {
	t.Helper()
	if code == CodeOverQuota {
		wantOutcome(t, o, engine.OutcomeTransient, CodeOverQuota)
		if o.RetryAfter != time.Minute {
			t.Fatalf("over-quota retry after %v, want a minute", o.RetryAfter)
		}
	} else {
		wantOutcome(t, o, engine.OutcomePermanent, CodeRefused)
	}
	if !strings.Contains(o.Reason, `"code":"`+code+`"`) {
		t.Fatalf("refusal reason %q does not carry %s", o.Reason, code)
	}
}

func TestInboxRefusesPeersNotAllowed(t *testing.T) {
	t.Parallel()
	var seen refusals
	friendKey := newKey(t)
	receiver := startNode(t, func(c *Config) {
		c.AnyPeer, c.AllowedPeers, c.OnRefused = false, []string{mustID(t, friendKey)}, seen.add
	})
	book := map[string][]string{receiver.PeerID(): receiver.Addrs()}
	stranger := startNode(t, func(c *Config) { c.Listen, c.AddressBook = nil, book })
	allowedOne := startNode(t, func(c *Config) { c.IdentityKey, c.Listen, c.AddressBook = friendKey, nil, book })

	// An unknown identity is refused, and the inbox is never asked to store anything.
	o := stranger.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "from a stranger"))
	wantRefused(t, o, CodeNotAllowed)
	if entries, puts := receiver.inbox.snapshot(); len(entries) != 0 || puts != 0 {
		t.Fatalf("a stranger's envelope reached the inbox: %d entries, %d puts", len(entries), puts)
	}
	if got := seen.list(); len(got) != 1 || got[0] != CodeNotAllowed {
		t.Fatalf("OnRefused saw %v, want [%s]", got, CodeNotAllowed)
	}

	// The allowed peer is taken.
	o = allowedOne.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "from a friend"))
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	if entries, _ := receiver.inbox.snapshot(); len(entries) != 1 || entries[0].From != allowedOne.PeerID() {
		t.Fatalf("inbox %+v, want the allowed peer's envelope", entries)
	}
}

func TestInboxTakesAnyPeer(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, func(c *Config) { c.AnyPeer, c.AllowedPeers = true, nil })
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "from anyone"))
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	if entries, _ := receiver.inbox.snapshot(); len(entries) != 1 {
		t.Fatalf("inbox holds %d entries, want 1", len(entries))
	}
}

func TestInboxEmptyAllowListTakesNobody(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, func(c *Config) { c.AnyPeer, c.AllowedPeers = false, nil })
	wantRefused(t, sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "x")), CodeNotAllowed)
}

func TestInboxMessagesPerMinute(t *testing.T) {
	t.Parallel()
	var seen refusals
	clock := enginetest.NewFakeClock(testNow)
	sender, receiver := pair(t, func(c *Config) { c.MessagesPerMinute, c.Clock, c.OnRefused = 2, clock, seen.add })
	send := func(id string) engine.Outcome {
		return sender.Send(context.Background(), peerOutbound(id, receiver.PeerID(), "tick"))
	}
	first, second := newMessageID(), newMessageID()
	wantOutcome(t, send(first), engine.OutcomeAccepted, "")
	wantOutcome(t, send(second), engine.OutcomeAccepted, "")
	third := newMessageID()
	wantRefused(t, send(third), CodeOverQuota)
	// A duplicate is answered with its cached answer even now, and spends nothing.
	wantOutcome(t, send(first), engine.OutcomeAccepted, "")
	// Half a minute later one envelope's allowance is back: the refused one is taken on resend.
	clock.Advance(30 * time.Second)
	wantOutcome(t, send(third), engine.OutcomeAccepted, "")
	wantRefused(t, send(newMessageID()), CodeOverQuota)

	entries, _ := receiver.inbox.snapshot()
	if len(entries) != 3 {
		t.Fatalf("inbox holds %d entries, want 3", len(entries))
	}
	if got := seen.list(); len(got) != 2 || got[0] != CodeOverQuota || got[1] != CodeOverQuota {
		t.Fatalf("OnRefused saw %v, want two over-quota refusals", got)
	}
	// Another sender has an allowance of its own.
	other := startNode(t, func(c *Config) {
		c.Listen, c.AddressBook = nil, map[string][]string{receiver.PeerID(): receiver.Addrs()}
	})
	wantOutcome(t, other.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "mine")), engine.OutcomeAccepted, "")
}

func TestInboxBytesPerDay(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, func(c *Config) { c.BytesPerDay = 10 })
	send := func(body string) engine.Outcome {
		return sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), body))
	}
	wantOutcome(t, send("123456"), engine.OutcomeAccepted, "")
	wantRefused(t, send("12345"), CodeOverQuota)
	wantOutcome(t, send("1234"), engine.OutcomeAccepted, "")
	if entries, _ := receiver.inbox.snapshot(); len(entries) != 2 {
		t.Fatalf("inbox holds %d entries, want 2", len(entries))
	}
}

func TestSenderBucketsForgetIdleSenders(t *testing.T) {
	t.Parallel()
	b := newSenderBuckets(60)
	fill := func(at time.Time) {
		for i := range maxSenderBuckets {
			if ok, _ := b.take(libp2ppeer.ID(fmt.Sprintf("sender-%d", i)), at); !ok {
				t.Fatalf("sender %d has no allowance", i)
			}
		}
	}
	// An hour on, every bucket is full again, the same as a fresh one: all are forgotten.
	fill(testNow)
	if ok, _ := b.take("newcomer", testNow.Add(time.Hour)); !ok || len(b.buckets) != 1 {
		t.Fatalf("take: %v with %d buckets kept, want only the newcomer's", ok, len(b.buckets))
	}
	// Buckets still in use are forgotten too rather than let the map grow without bound.
	clear(b.buckets)
	fill(testNow)
	if ok, _ := b.take("newcomer", testNow); !ok || len(b.buckets) != 1 {
		t.Fatalf("take: %v with %d buckets kept, want only the newcomer's", ok, len(b.buckets))
	}
	// A sender's spent allowance stays spent while it is kept.
	for range 59 {
		b.take("newcomer", testNow)
	}
	if ok, _ := b.take("newcomer", testNow); ok {
		t.Fatal("a sender took 61 envelopes of a 60-a-minute allowance at once")
	}
}
