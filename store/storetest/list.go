package storetest

import (
	"fmt"
	"testing"
	"time"

	"switchboard/engine"
)

// list runs a listing and fails the test on error.
func (b *bundle) list(q engine.MessageQuery) engine.MessagePage {
	b.t.Helper()
	p, err := b.store.ListMessages(b.ctx, q)
	if err != nil {
		b.t.Fatalf("ListMessages(%+v): %v", q, err)
	}
	return p
}

func pageIDs(p engine.MessagePage) []string {
	out := make([]string, len(p.Messages))
	for i, m := range p.Messages {
		out[i] = m.ID
	}
	return out
}

func testListFilters(t *testing.T, b *bundle) {
	// Accepted one second apart, in this order.
	b.inState("m-failed", engine.DispatchFailed)
	b.submitted("m-undelivered", "ref-u")
	b.receipts("sms-gateway", engine.Receipt{ProviderReference: "ref-u", Report: engine.ReportUndelivered})
	b.submitted("m-delivered", "ref-d")
	b.receipts("sms-gateway", engine.Receipt{ProviderReference: "ref-d", Report: engine.ReportDelivered})
	b.inState("m-submitted", engine.DispatchSubmitted)
	b.inState("m-queued", engine.DispatchQueued)
	all := []string{"m-queued", "m-submitted", "m-delivered", "m-undelivered", "m-failed"}
	equalIDs(t, "newest first", pageIDs(b.list(engine.MessageQuery{Limit: 10})), all)
	equalIDs(t, "limit", pageIDs(b.list(engine.MessageQuery{Limit: 2})), all[:2])
	for status, want := range map[string][]string{
		"failed":    {"m-undelivered", "m-failed"},
		"delivered": {"m-delivered"},
		"submitted": {"m-submitted"},
		"queued":    {"m-queued"},
		"unknown":   {},
	} {
		q := engine.MessageQuery{Status: status, Limit: 10}
		equalIDs(t, "status "+status, pageIDs(b.list(q)), want)
		if n, err := b.store.CountMessages(b.ctx, q); err != nil || n != int64(len(want)) {
			t.Fatalf("CountMessages(%s) = %d, %v; want %d", status, n, err, len(want))
		}
	}
	equalIDs(t, "dispatch submitted", pageIDs(b.list(engine.MessageQuery{Dispatch: engine.DispatchSubmitted, Limit: 10})),
		[]string{"m-submitted", "m-delivered", "m-undelivered"})
	cut := b.message("m-delivered").AcceptedAt
	equalIDs(t, "accepted before", pageIDs(b.list(engine.MessageQuery{AcceptedBefore: cut, Limit: 10})),
		[]string{"m-undelivered", "m-failed"})
	p := b.list(engine.MessageQuery{Status: "failed", Limit: 10})
	for _, m := range p.Messages {
		if len(m.Attempts) != 0 {
			t.Fatalf("a listing carries attempts: %+v", m)
		}
	}
	if p.Next != "" {
		t.Fatalf("a NewestFirst page that is not full has a cursor %q", p.Next)
	}
	if _, err := b.store.ListMessages(b.ctx, engine.MessageQuery{Status: "lost", Limit: 10}); err == nil {
		t.Fatal("an unknown status was accepted")
	}
	for _, limit := range []int{0, engine.MaxListLimit + 1} {
		if _, err := b.store.ListMessages(b.ctx, engine.MessageQuery{Limit: limit}); err == nil {
			t.Fatalf("limit %d was accepted", limit)
		}
	}
}

// testListScanCursor walks queued messages in pages while cancelling what it saw, as a bulk
// cancel does: every message is seen exactly once.
func testListScanCursor(t *testing.T, b *bundle) {
	const total = 25
	b.inState("m-failed", engine.DispatchFailed)
	var batch []engine.Acceptance
	for i := range total {
		batch = append(batch, b.acceptance(fmt.Sprintf("m-%02d", i), withAcceptedAt(Epoch().Add(time.Duration(total-i)*time.Second))))
	}
	for _, r := range b.store.Accept(b.ctx, batch) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	q := engine.MessageQuery{Dispatch: engine.DispatchQueued, Order: engine.ScanOrder, Limit: 10}
	seen := map[string]bool{}
	pages := 0
	for {
		p := b.list(q)
		pages++
		for _, m := range p.Messages {
			if seen[m.ID] || m.Dispatch != engine.DispatchQueued {
				t.Fatalf("page %d: %s seen twice or not queued (%s)", pages, m.ID, m.Dispatch)
			}
			seen[m.ID] = true
			if r := b.apply(engine.ActionCancel, m.ID, ""); r.Err != nil {
				t.Fatal(r.Err)
			}
		}
		if p.Next == "" {
			break
		}
		q.After = p.Next
	}
	if len(seen) != total || pages != 3 {
		t.Fatalf("saw %d messages in %d pages, want %d in 3", len(seen), pages, total)
	}
	if _, err := b.store.ListMessages(b.ctx, engine.MessageQuery{Order: engine.ScanOrder, After: "not a cursor", Limit: 1}); err == nil {
		t.Fatal("a cursor the store did not make was accepted")
	}
}
