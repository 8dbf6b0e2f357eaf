package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
)

// inboxQuotaTests are a sender's quota on the inbox: its payload bytes per UTC day, counted in
// the transaction that stores each envelope, and the refusal of new envelopes once the
// receiver's per-minute allowance is spent.
func inboxQuotaTests() []namedTest {
	return []namedTest{
		{"InboxBytesPerDay", testInboxBytesPerDay},
		{"InboxBytesPerDayConcurrent", testInboxBytesPerDayConcurrent},
		{"InboxRefuseNewAnswersDuplicates", testInboxRefuseNew},
	}
}

// quotaEnvelope is inbox entry n from peer with a payload of size bytes under a daily quota.
func (b *bundle) quotaEnvelope(n int, from, msgID string, size int, quota int64) engine.InboxEntry {
	e := b.inboxEnvelope(n, from, msgID)
	e.Payload, e.BytesPerDay = bytes.Repeat([]byte("q"), size), quota
	return e
}

// wantStored checks that res stored e as a new entry.
func wantStored(t *testing.T, res engine.InboxResult, e engine.InboxEntry) {
	t.Helper()
	if res.Duplicate || res.OverQuota || res.InboxID != e.ID {
		t.Fatalf("PutInbox(%s from %.12s, %d bytes) = %+v, want it stored", e.MessageID, e.From, len(e.Payload), res)
	}
}

// wantOverQuota checks that res refused e as over its quota.
func wantOverQuota(t *testing.T, res engine.InboxResult, e engine.InboxEntry) {
	t.Helper()
	if !res.OverQuota || res.Duplicate || res.InboxID != "" || res.Response != nil {
		t.Fatalf("PutInbox(%s from %.12s, %d bytes) = %+v, want it refused over quota", e.MessageID, e.From, len(e.Payload), res)
	}
}

func testInboxBytesPerDay(t *testing.T, b *bundle) {
	const quota = 100
	a1, a2 := b.quotaEnvelope(1, peerAlice, "a-1", 40, quota), b.quotaEnvelope(2, peerAlice, "a-2", 40, quota)
	wantStored(t, b.putInbox(a1), a1)
	wantStored(t, b.putInbox(a2), a2)
	records := b.auditRecords()
	over := b.quotaEnvelope(3, peerAlice, "a-3", 21, quota) // 101 bytes in all
	wantOverQuota(t, b.putInbox(over), over)
	if after := b.auditRecords(); after != records {
		t.Fatalf("a refused envelope wrote %d journal records", after-records)
	}
	// A duplicate is answered as always and counts nothing, over the quota or not.
	dup := b.quotaEnvelope(4, peerAlice, "a-1", 40, quota)
	if res := b.putInbox(dup); !res.Duplicate || res.InboxID != a1.ID || !bytes.Equal(res.Response, a1.Response) {
		t.Fatalf("duplicate at the quota = %+v, want the first entry's cached answer", res)
	}
	// What is left of the quota is still there: exactly 20 bytes.
	exact := b.quotaEnvelope(5, peerAlice, "a-5", 20, quota)
	wantStored(t, b.putInbox(exact), exact)
	empty := b.quotaEnvelope(6, peerAlice, "a-6", 1, quota)
	wantOverQuota(t, b.putInbox(empty), empty)
	// Each sender has a quota of its own; a payload over the whole quota never fits.
	bob := b.quotaEnvelope(7, peerBob, "b-1", quota, quota)
	wantStored(t, b.putInbox(bob), bob)
	huge := b.quotaEnvelope(8, peerBob, "b-2", quota+1, quota)
	wantOverQuota(t, b.putInbox(huge), huge)
	// Without a quota nothing is refused or counted.
	free := b.quotaEnvelope(9, peerAlice, "a-9", 500, 0)
	wantStored(t, b.putInbox(free), free)

	got, _ := b.listInbox("", 20)
	equalIDs(t, "inbox", inboxEntryIDs(got), []string{a1.ID, a2.ID, exact.ID, bob.ID, free.ID})

	// The next UTC day starts afresh, and a refused envelope left no idempotency record: its
	// resend is judged again and stored.
	b.clock.Advance(24 * time.Hour)
	again := b.quotaEnvelope(10, peerAlice, "a-3", 21, quota)
	wantStored(t, b.putInbox(again), again)
	full := b.quotaEnvelope(11, peerAlice, "a-11", quota-21, quota)
	wantStored(t, b.putInbox(full), full)
	one := b.quotaEnvelope(12, peerAlice, "a-12", 1, quota)
	wantOverQuota(t, b.putInbox(one), one)
}

func testInboxBytesPerDayConcurrent(t *testing.T, b *bundle) {
	const n, size, quota = 24, 10, 75 // room for 7 of them
	results := make([]engine.InboxResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = b.inboxOf().PutInbox(b.ctx, b.quotaEnvelope(i+1, peerAlice, fmt.Sprintf("c-%d", i), size, quota))
		})
	}
	wg.Wait()
	stored, refused := 0, 0
	for i, res := range results {
		switch {
		case errs[i] != nil:
			t.Fatalf("PutInbox %d: %v", i, errs[i])
		case res.OverQuota:
			refused++
		case !res.Duplicate:
			stored++
		}
	}
	got, _ := b.listInbox("", 100)
	if stored != quota/size || refused != n-stored || len(got) != stored {
		t.Fatalf("%d stored, %d refused, %d listed; want %d stored", stored, refused, len(got), quota/size)
	}
}

func testInboxRefuseNew(t *testing.T, b *bundle) {
	first := b.inboxEnvelope(1, peerAlice, "m-1")
	wantStored(t, b.putInbox(first), first)
	dup := b.inboxEnvelope(2, peerAlice, "m-1")
	dup.RefuseNew = true
	if res := b.putInbox(dup); !res.Duplicate || res.OverQuota || !bytes.Equal(res.Response, first.Response) {
		t.Fatalf("a duplicate with RefuseNew = %+v, want the cached answer", res)
	}
	fresh := b.inboxEnvelope(3, peerAlice, "m-3")
	fresh.RefuseNew = true
	wantOverQuota(t, b.putInbox(fresh), fresh)
	fresh.RefuseNew = false // the refusal kept nothing: the resend is stored
	wantStored(t, b.putInbox(fresh), fresh)
	got, _ := b.listInbox("", 10)
	equalIDs(t, "inbox", inboxEntryIDs(got), []string{first.ID, fresh.ID})
}
