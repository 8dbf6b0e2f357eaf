package storetest

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

// inboxTests are the peer inbox and its idempotency records (engine.Inbox), and making a
// connected peer's queued messages due (engine.PeerDue), issue 7.
func inboxTests() []namedTest {
	return []namedTest{
		{"InboxStoresAndLists", testInboxRoundTrip},
		{"InboxDuplicateAnswersCachedResponse", testInboxDuplicate},
		{"InboxResponseCacheLimit", testInboxCacheLimit},
		{"InboxConcurrentDuplicatesDeliverOnce", testInboxConcurrentDuplicates},
		{"InboxPagesByID", testInboxPaging},
		{"InboxPageByteBudget", testInboxByteBudget},
		{"InboxRefusesInvalidEntries", testInboxRefusals},
		{"MakeRecipientDue", testMakeRecipientDue},
		{"MakeRecipientDueLongQueue", testMakeRecipientDueLongQueue},
	}
}

const (
	peerAlice       = "12D3KooWAliceAliceAliceAliceAliceAliceAliceAlice"
	peerBob         = "12D3KooWBobBobBobBobBobBobBobBobBobBobBobBobBob"
	inboxProto      = "/switchboard/1.0.0/message"
	inboxOtherProto = "/other/1.0.0"
	inboxCacheLimit = 256 << 10
	inboxWaiting    = time.Hour
)

// inboxOf is the store's engine.Inbox; every store must implement it.
func (b *bundle) inboxOf() engine.Inbox {
	b.t.Helper()
	in, ok := b.store.(engine.Inbox)
	if !ok {
		b.t.Fatalf("%T does not implement engine.Inbox", b.store)
	}
	return in
}

// inboxID is the n-th of a run of canonical UUIDv7s, in increasing order with n.
func inboxID(n int) string {
	ts := fmt.Sprintf("%012x", Epoch().UnixMilli()+int64(n))
	return fmt.Sprintf("%s-%s-7000-8000-%012x", ts[:8], ts[8:], n)
}

// inboxAck is the acknowledgement the peer provider stores with entry id.
func inboxAck(id string) []byte { return []byte(`{"accepted":true,"inboxId":"` + id + `"}`) }

// inboxEnvelope is inbox entry n: messageId msgID from peer, received at the clock's time.
func (b *bundle) inboxEnvelope(n int, from, msgID string) engine.InboxEntry {
	id := inboxID(n)
	return engine.InboxEntry{
		ID: id, From: from, Protocol: inboxProto, MessageID: msgID, TsMs: uint64(1_700_000_000_000 + n),
		ReceivedAt: b.clock.Now(), Payload: []byte("payload of " + msgID), Response: inboxAck(id),
	}
}

// put stores an entry and fails the test on error.
func (b *bundle) putInbox(e engine.InboxEntry) engine.InboxResult {
	b.t.Helper()
	res, err := b.inboxOf().PutInbox(b.ctx, e)
	if err != nil {
		b.t.Fatalf("PutInbox(%s): %v", e.MessageID, err)
	}
	return res
}

// list reads one inbox page and fails the test on error.
func (b *bundle) listInbox(after string, limit int) ([]engine.InboxEntry, string) {
	b.t.Helper()
	entries, next, err := b.inboxOf().ListInbox(b.ctx, after, limit)
	if err != nil {
		b.t.Fatalf("ListInbox(%q, %d): %v", after, limit, err)
	}
	return entries, next
}

// inboxEntryIDs lists the ids of entries in order.
func inboxEntryIDs(entries []engine.InboxEntry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.ID
	}
	return out
}

func testInboxRoundTrip(t *testing.T, b *bundle) {
	binary := []byte{0, 1, 0xff, 0xfe, '\n', 0}
	entries := []engine.InboxEntry{b.inboxEnvelope(1, peerAlice, "m-1"), b.inboxEnvelope(2, peerBob, "m-2"), b.inboxEnvelope(3, peerAlice, "m-3")}
	entries[1].Payload, entries[1].TsMs = binary, math.MaxUint64
	entries[2].Payload, entries[2].TsMs = nil, 0
	entries[2].ReceivedAt = b.clock.Now().Add(1500 * time.Millisecond)
	for _, e := range entries {
		res := b.putInbox(e)
		if res.Duplicate || res.InboxID != e.ID || !bytes.Equal(res.Response, e.Response) {
			t.Fatalf("PutInbox(%s) = %+v, want a new entry answered with its response", e.MessageID, res)
		}
	}
	got, next := b.listInbox("", 10)
	if len(got) != 3 || next != entries[2].ID {
		t.Fatalf("ListInbox = %v next %q, want 3 entries and next %q", inboxEntryIDs(got), next, entries[2].ID)
	}
	for i, g := range got {
		w := entries[i]
		if g.ID != w.ID || g.From != w.From || g.Protocol != w.Protocol || g.MessageID != w.MessageID ||
			g.TsMs != w.TsMs || !g.ReceivedAt.Equal(w.ReceivedAt) || !bytes.Equal(g.Payload, w.Payload) {
			t.Fatalf("entry %d = %+v, want %+v", i, g, w)
		}
		if g.Payload == nil {
			t.Fatalf("entry %d: a kept payload reads back nil (nil means erased)", i)
		}
	}
}

func testInboxDuplicate(t *testing.T, b *bundle) {
	before := b.auditRecords()
	first := b.inboxEnvelope(1, peerAlice, "m-1")
	b.putInbox(first)
	stored := b.auditRecords()
	if before >= 0 && stored != before+1 {
		t.Fatalf("storing an envelope wrote %d journal records, want 1", stored-before)
	}
	again := b.inboxEnvelope(2, peerAlice, "m-1")
	again.Payload, again.Response = []byte("another body"), inboxAck(again.ID)
	res := b.putInbox(again)
	if after := b.auditRecords(); after != stored {
		t.Fatalf("a duplicate envelope wrote %d journal records, want none", after-stored)
	}
	if !res.Duplicate || res.InboxID != first.ID || !bytes.Equal(res.Response, first.Response) {
		t.Fatalf("duplicate = %+v, want the first entry's id %s and its cached response", res, first.ID)
	}
	// The key is (peer, protocol, messageId): another peer or protocol is another envelope.
	otherPeer := b.inboxEnvelope(3, peerBob, "m-1")
	otherProtocol := b.inboxEnvelope(4, peerAlice, "m-1")
	otherProtocol.Protocol = inboxOtherProto
	for _, e := range []engine.InboxEntry{otherPeer, otherProtocol} {
		if res := b.putInbox(e); res.Duplicate || res.InboxID != e.ID {
			t.Fatalf("PutInbox(%s, %s) = %+v, want a new entry", e.From, e.Protocol, res)
		}
	}
	got, _ := b.listInbox("", 10)
	equalIDs(t, "inbox", inboxEntryIDs(got), []string{first.ID, otherPeer.ID, otherProtocol.ID})
	if !bytes.Equal(got[0].Payload, first.Payload) {
		t.Fatalf("the duplicate changed the stored payload to %q", got[0].Payload)
	}
}

func testInboxCacheLimit(t *testing.T, b *bundle) {
	for i, size := range []int{inboxCacheLimit, inboxCacheLimit + 1} {
		msgID := fmt.Sprintf("m-%d", size)
		e := b.inboxEnvelope(2*i+1, peerAlice, msgID)
		e.Response = bytes.Repeat([]byte("r"), size)
		if res := b.putInbox(e); res.Duplicate || !bytes.Equal(res.Response, e.Response) {
			t.Fatalf("first put of a %d-byte response: duplicate %v, %d bytes back", size, res.Duplicate, len(res.Response))
		}
		res := b.putInbox(b.inboxEnvelope(2*i+2, peerAlice, msgID))
		switch {
		case !res.Duplicate || res.InboxID != e.ID:
			t.Fatalf("duplicate of %s = %+v, want the first entry", msgID, res)
		case size <= inboxCacheLimit && !bytes.Equal(res.Response, e.Response):
			t.Fatalf("a %d-byte response was not kept (got %d bytes)", size, len(res.Response))
		case size > inboxCacheLimit && res.Response != nil:
			t.Fatalf("a %d-byte response came back (%d bytes), want nil (RESPONSE_GONE)", size, len(res.Response))
		}
	}
}

func testInboxConcurrentDuplicates(t *testing.T, b *bundle) {
	const n = 32
	results := make([]engine.InboxResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = b.inboxOf().PutInbox(b.ctx, b.inboxEnvelope(i+1, peerAlice, "same"))
		})
	}
	wg.Wait()
	var winner engine.InboxResult
	fresh := 0
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("PutInbox %d: %v", i, errs[i])
		}
		if !res.Duplicate {
			fresh++
			winner = res
		}
	}
	if fresh != 1 {
		t.Fatalf("%d of %d concurrent copies were stored, want exactly 1", fresh, n)
	}
	for i, res := range results {
		if res.InboxID != winner.InboxID || !bytes.Equal(res.Response, winner.Response) {
			t.Fatalf("copy %d answered %+v, want the winner's %+v", i, res, winner)
		}
	}
	got, _ := b.listInbox("", 100)
	equalIDs(t, "inbox", inboxEntryIDs(got), []string{winner.InboxID})
}

func testInboxPaging(t *testing.T, b *bundle) {
	if got, next := b.listInbox("", 5); len(got) != 0 || next != "" {
		t.Fatalf("empty inbox: %v next %q", inboxEntryIDs(got), next)
	}
	// Stored out of order, listed by id.
	for _, n := range []int{3, 1, 5, 2, 4} {
		b.putInbox(b.inboxEnvelope(n, peerAlice, fmt.Sprintf("m-%d", n)))
	}
	var pages [][]string
	after := ""
	for range 5 {
		got, next := b.listInbox(after, 2)
		if len(got) == 0 {
			if next != "" {
				t.Fatalf("an empty page has next %q", next)
			}
			break
		}
		if next != got[len(got)-1].ID {
			t.Fatalf("next = %q, want the page's last id %q", next, got[len(got)-1].ID)
		}
		pages = append(pages, inboxEntryIDs(got))
		after = next
	}
	want := [][]string{{inboxID(1), inboxID(2)}, {inboxID(3), inboxID(4)}, {inboxID(5)}}
	if fmt.Sprint(pages) != fmt.Sprint(want) {
		t.Fatalf("pages %v, want %v", pages, want)
	}
	// A cursor need not be a stored id: it is a position in id order.
	if got, _ := b.listInbox(inboxID(2)[:35]+"3", 10); len(got) != 3 || got[0].ID != inboxID(3) {
		t.Fatalf("after a position between entries: %v", inboxEntryIDs(got))
	}
	for _, bad := range []struct {
		after string
		limit int
	}{
		{"", 0}, {"", -1}, {"", engine.MaxListLimit + 1}, {"not-a-cursor", 10},
		{strings.ToUpper(inboxID(1)), 10}, {inboxID(1) + "x", 10},
	} {
		_, _, err := b.inboxOf().ListInbox(b.ctx, bad.after, bad.limit)
		if engine.CodeOf(err) != engine.CodeRequestInvalid {
			t.Fatalf("ListInbox(%q, %d): error %v, want %s", bad.after, bad.limit, err, engine.CodeRequestInvalid)
		}
	}
	if got, _ := b.listInbox("", engine.MaxListLimit); len(got) != 5 {
		t.Fatalf("limit %d: %d entries", engine.MaxListLimit, len(got))
	}
}

func testInboxByteBudget(t *testing.T, b *bundle) {
	sizes := []int{store.InboxPageBytes - 10, 20, 5}
	for i, size := range sizes {
		e := b.inboxEnvelope(i+1, peerAlice, fmt.Sprintf("m-%d", i))
		e.Payload = bytes.Repeat([]byte{'p'}, size)
		b.putInbox(e)
	}
	first, next := b.listInbox("", 10)
	equalIDs(t, "page 1 (the next entry would pass the byte budget)", inboxEntryIDs(first), []string{inboxID(1)})
	if len(first[0].Payload) != sizes[0] {
		t.Fatalf("payload of %d bytes read back as %d", sizes[0], len(first[0].Payload))
	}
	second, _ := b.listInbox(next, 10)
	equalIDs(t, "page 2", inboxEntryIDs(second), []string{inboxID(2), inboxID(3)})
}

func testInboxRefusals(t *testing.T, b *bundle) {
	valid := b.inboxEnvelope(1, peerAlice, "m-1")
	edits := map[string]func(*engine.InboxEntry){
		"empty id":      func(e *engine.InboxEntry) { e.ID = "" },
		"UUIDv4 id":     func(e *engine.InboxEntry) { e.ID = "0190a7c2-1234-4000-8000-000000000001" },
		"uppercase id":  func(e *engine.InboxEntry) { e.ID = strings.ToUpper(e.ID) },
		"no sender":     func(e *engine.InboxEntry) { e.From = "" },
		"no protocol":   func(e *engine.InboxEntry) { e.Protocol = "" },
		"no message id": func(e *engine.InboxEntry) { e.MessageID = "" },
	}
	for name, edit := range edits {
		e := valid
		edit(&e)
		if _, err := b.inboxOf().PutInbox(b.ctx, e); err == nil {
			t.Fatalf("%s: PutInbox stored %+v", name, e)
		}
	}
	b.putInbox(valid)
	// An inbox id used twice fails the second envelope whole: its idempotency record is undone,
	// so that the same envelope is stored when it comes again under a fresh id.
	clash := b.inboxEnvelope(1, peerAlice, "m-2")
	if _, err := b.inboxOf().PutInbox(b.ctx, clash); err == nil {
		t.Fatal("PutInbox stored a second entry under an inbox id already used")
	}
	if res := b.putInbox(b.inboxEnvelope(2, peerAlice, "m-2")); res.Duplicate || res.InboxID != inboxID(2) {
		t.Fatalf("after a failed put the envelope reads as %+v, want a new entry", res)
	}
	got, _ := b.listInbox("", 10)
	equalIDs(t, "inbox", inboxEntryIDs(got), []string{inboxID(1), inboxID(2)})
}

// toPeerRecipient makes an acceptance a peer message to peerID (the recipient lives in the payload).
func toPeerRecipient(peerID string) option {
	return func(a *engine.Acceptance) {
		a.Message.Channel, a.Message.SenderProfile, a.Message.Provider = engine.ChannelPeer, "case-peers", "peers"
		a.Message.RecipientKind, a.Message.TemplateID = "peer", "case-update"
		a.Payload = engine.Payload{Recipient: peerID, Parts: map[string]string{"body": "case 7 moved"}}
	}
}

// peerDueOf is the store's engine.PeerDue; every store must implement it.
func (b *bundle) peerDueOf() engine.PeerDue {
	b.t.Helper()
	pd, ok := b.store.(engine.PeerDue)
	if !ok {
		b.t.Fatalf("%T does not implement engine.PeerDue", b.store)
	}
	return pd
}

func testMakeRecipientDue(t *testing.T, b *bundle) {
	later := b.clock.Now().Add(inboxWaiting)
	b.accept("final", toPeerRecipient(peerAlice))
	b.clock.Advance(time.Second)
	b.mustFinish(b.claimOne("final"), engine.AttemptPermanent, engine.DispatchFailed, engine.ReportNone, "")
	b.accept("sending", toPeerRecipient(peerAlice))
	b.clock.Advance(time.Second)
	b.claimOne("sending")

	b.accept("alice-due", toPeerRecipient(peerAlice))
	b.accept("alice-waiting", toPeerRecipient(peerAlice), withNextAttempt(later))
	b.accept("alice-held", toPeerRecipient(peerAlice), withNextAttempt(later), withNotBefore(later))
	b.accept("bob-waiting", toPeerRecipient(peerBob), withNextAttempt(later))
	b.accept("alice-prefix", toPeerRecipient(peerAlice+"x"), withNextAttempt(later))
	b.accept("sms-waiting", withNextAttempt(later), func(a *engine.Acceptance) { a.Payload.Recipient = peerAlice })

	now := b.clock.Advance(time.Second)
	n, err := b.peerDueOf().MakeRecipientDue(b.ctx, peerAlice, now)
	if err != nil || n != 1 {
		t.Fatalf("MakeRecipientDue = %d, %v; want 1 (alice-waiting)", n, err)
	}
	equalIDs(t, "claimed", claimIDs(b.claim(100, 1<<20)), []string{"alice-due", "alice-waiting"})
	if n, err := b.peerDueOf().MakeRecipientDue(b.ctx, peerAlice, now); err != nil || n != 0 {
		t.Fatalf("second MakeRecipientDue = %d, %v; want 0", n, err)
	}
	if m := b.message("final"); m.Dispatch != engine.DispatchFailed {
		t.Fatalf("a final message moved to %s", m.Dispatch)
	}
	if _, err := b.peerDueOf().MakeRecipientDue(b.ctx, "", now); err == nil {
		t.Fatal("MakeRecipientDue accepted an empty peer id")
	}
}

func testMakeRecipientDueLongQueue(t *testing.T, b *bundle) {
	const n = 1234 // more than any reasonable writer chunk, not a multiple of one
	later := b.clock.Now().Add(inboxWaiting)
	batch := make([]engine.Acceptance, 0, n+1)
	for i := range n {
		batch = append(batch, b.acceptance(fmt.Sprintf("m-%04d", i), toPeerRecipient(peerAlice), withNextAttempt(later)))
	}
	batch = append(batch, b.acceptance("bob", toPeerRecipient(peerBob), withNextAttempt(later)))
	for i, res := range b.store.Accept(b.ctx, batch) {
		if res.Err != nil {
			t.Fatalf("Accept %d: %v", i, res.Err)
		}
	}
	now := b.clock.Advance(time.Second)
	got, err := b.peerDueOf().MakeRecipientDue(b.ctx, peerAlice, now)
	if err != nil || got != n {
		t.Fatalf("MakeRecipientDue = %d, %v; want %d", got, err, n)
	}
	p := b.claim(2*n, 1<<30)
	if len(p.Claims) != n {
		t.Fatalf("claimed %d messages, want %d", len(p.Claims), n)
	}
	for _, c := range p.Claims {
		if c.Message.ID == "bob" {
			t.Fatal("bob's message became due")
		}
	}
}
