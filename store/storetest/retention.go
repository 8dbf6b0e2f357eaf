package storetest

import (
	"testing"
	"time"

	"switchboard/engine"
)

// erase runs one EraseBatch at the clock's time and returns what it erased.
func (b *bundle) erase(kind engine.EraseKind, cutoff time.Time, limit int) int {
	b.t.Helper()
	res, err := b.store.EraseBatch(b.ctx, engine.EraseBatch{Kind: kind, Cutoff: cutoff, Limit: limit,
		At: b.clock.Now(), Audit: engine.AuditEntry{Actor: "worker"}})
	if err != nil {
		b.t.Fatalf("EraseBatch(%s, %s): %v", kind, cutoff, err)
	}
	return res.Erased
}

// erasable counts what kind would erase at cutoff.
func (b *bundle) erasable(kind engine.EraseKind, cutoff time.Time) int64 {
	b.t.Helper()
	n, err := b.store.CountErasable(b.ctx, kind, cutoff)
	if err != nil {
		b.t.Fatalf("CountErasable(%s): %v", kind, err)
	}
	return n
}

// finalAt is when message id became final.
func (b *bundle) finalAt(id string) time.Time {
	b.t.Helper()
	m := b.message(id)
	if m.FinalAt == nil {
		b.t.Fatalf("%s (%s) has no final time", id, m.Dispatch)
	}
	return *m.FinalAt
}

func testRetentionPayloadBoundary(t *testing.T, b *bundle) {
	b.inState("m-1-submitted", engine.DispatchSubmitted)
	b.inState("m-2-failed", engine.DispatchFailed)
	b.inState("m-3-cancelled", engine.DispatchCancelled)
	b.inState("m-4-expired", engine.DispatchExpired)
	first := b.finalAt("m-1-submitted")
	records := b.auditRecords()
	if n, c := b.erase(engine.ErasePayloads, first.Add(-time.Millisecond), 100), b.erasable(engine.ErasePayloads, first.Add(-time.Millisecond)); n != 0 || c != 0 {
		t.Fatalf("one millisecond before the first final time: erased %d, erasable %d", n, c)
	}
	if got := b.auditRecords(); records >= 0 && got != records {
		t.Fatalf("an empty batch was journaled: %d records, was %d", got, records)
	}
	if c := b.erasable(engine.ErasePayloads, first); c != 1 {
		t.Fatalf("erasable at the first final time = %d, want 1", c)
	}
	at := b.clock.Now()
	if n := b.erase(engine.ErasePayloads, first, 100); n != 1 {
		t.Fatalf("at the first final time: erased %d, want 1", n)
	}
	m := b.message("m-1-submitted")
	if m.PayloadErasedAt == nil || !m.PayloadErasedAt.Equal(at) || m.Dispatch != engine.DispatchSubmitted || len(m.Attempts) != 1 {
		t.Fatalf("after erasing its payload: %+v", m)
	}
	if b.message("m-2-failed").PayloadErasedAt != nil {
		t.Fatal("a payload past the cutoff was erased")
	}
	if got := b.auditRecords(); records >= 0 && got != records+1 {
		t.Fatalf("one batch made %d journal records, want 1", got-records)
	}
	now := b.clock.Now()
	if c := b.erasable(engine.ErasePayloads, now); c != 3 {
		t.Fatalf("erasable now = %d, want the other 3 final messages", c)
	}
	if n := b.erase(engine.ErasePayloads, now, 100); n != 3 {
		t.Fatalf("erased %d, want 3", n)
	}
	if c := b.erasable(engine.ErasePayloads, now); c != 0 {
		t.Fatalf("erasable after erasing = %d", c)
	}
}

func testRetentionRecords(t *testing.T, b *bundle) {
	b.inState("m-a", engine.DispatchSubmitted)
	b.inState("m-b", engine.DispatchFailed)
	b.inState("m-c", engine.DispatchCancelled)
	if n := b.erase(engine.ErasePayloads, b.finalAt("m-a"), 10); n != 1 {
		t.Fatalf("erased %d payloads, want m-a's", n)
	}
	cut := b.finalAt("m-b")
	if c := b.erasable(engine.EraseRecords, cut.Add(-time.Millisecond)); c != 1 {
		t.Fatalf("records erasable before m-b's final time = %d, want m-a", c)
	}
	if c := b.erasable(engine.EraseRecords, cut); c != 2 {
		t.Fatalf("records erasable at m-b's final time = %d, want m-a (payload gone) and m-b (payload kept)", c)
	}
	if n := b.erase(engine.EraseRecords, cut, 10); n != 2 {
		t.Fatalf("erased %d records, want 2", n)
	}
	for _, id := range []string{"m-a", "m-b"} {
		_, err := b.store.Message(b.ctx, id)
		wantErr(t, "Message("+id+") after its record was erased", err, engine.ErrNotFound)
	}
	if m := b.message("m-c"); m.Dispatch != engine.DispatchCancelled || m.PayloadErasedAt != nil {
		t.Fatalf("m-c past the cutoff: %+v", m)
	}
	if n := b.list(engine.MessageQuery{Limit: 10}); len(n.Messages) != 1 {
		t.Fatalf("listing after erasure: %v", pageIDs(n))
	}
}

func testRetentionBatchLimit(t *testing.T, b *bundle) {
	for _, id := range []string{"m-1", "m-2", "m-3", "m-4", "m-5"} {
		b.inState(id, engine.DispatchCancelled)
	}
	now := b.clock.Now()
	for i, want := range []int{2, 2, 1, 0} {
		if n := b.erase(engine.ErasePayloads, now, 2); n != want {
			t.Fatalf("batch %d erased %d, want %d", i, n, want)
		}
	}
	for _, limit := range []int{0, engine.MaxEraseBatch + 1} {
		if _, err := b.store.EraseBatch(b.ctx, engine.EraseBatch{Kind: engine.ErasePayloads, Cutoff: now, Limit: limit}); err == nil {
			t.Fatalf("limit %d was accepted", limit)
		}
	}
	if _, err := b.store.EraseBatch(b.ctx, engine.EraseBatch{Kind: "everything", Cutoff: now, Limit: 1}); err == nil {
		t.Fatal("an unknown kind was accepted")
	}
}

func testRetentionReceipts(t *testing.T, b *bundle) {
	b.accept("m-1", withKey("k1", "body1"))
	created := b.clock.Now()
	b.clock.Advance(time.Second)
	b.accept("m-2", withKey("k2", "body2"))
	b.clock.Advance(time.Second)
	if c := b.erasable(engine.EraseSubmissionReceipts, created.Add(-time.Millisecond)); c != 0 {
		t.Fatalf("receipts erasable before the first acceptance = %d", c)
	}
	if c := b.erasable(engine.EraseSubmissionReceipts, created); c != 1 {
		t.Fatalf("receipts erasable at the first acceptance = %d, want 1", c)
	}
	if n := b.erase(engine.EraseSubmissionReceipts, created, 10); n != 1 {
		t.Fatalf("erased %d receipts, want 1", n)
	}
	if n := b.erase(engine.EraseSubmissionReceipts, created, 10); n != 0 {
		t.Fatalf("erased %d receipts again", n)
	}
	// Inside the receipt window, but the stored answer is gone: the key stays spent.
	for _, body := range []string{"body1", "another body"} {
		r := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance("m-3", withKey("k1", body))})[0]
		wantErr(t, "replay of an erased receipt with "+body, r.Err, engine.ErrIdempotencyExpired)
	}
	if r := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance("m-4", withKey("k2", "body2"))})[0]; !r.Replayed || r.MessageID != "m-2" {
		t.Fatalf("replay of a kept receipt = %+v", r)
	}
	if m := b.message("m-1"); m.Dispatch != engine.DispatchQueued || m.PayloadErasedAt != nil {
		t.Fatalf("erasing the receipt touched the message: %+v", m)
	}
}

func testRetentionProviderReceipts(t *testing.T, b *bundle) {
	if tally := b.receipts("sms-gateway", engine.Receipt{ProviderReference: "ref-x", Report: engine.ReportDelivered}); tally.Unmatched != 1 {
		t.Fatalf("receipt: %+v", tally)
	}
	kept := b.clock.Now()
	if c := b.erasable(engine.EraseProviderReceipts, kept.Add(-time.Second)); c != 0 {
		t.Fatalf("kept receipts erasable before arrival = %d", c)
	}
	if n := b.erase(engine.EraseProviderReceipts, kept, 10); n != 1 {
		t.Fatalf("erased %d kept receipts, want 1", n)
	}
	b.submitted("m-1", "ref-x")
	if m := b.message("m-1"); m.Report != engine.ReportNone {
		t.Fatalf("an erased receipt was applied: %+v", m)
	}
}

// testRetentionLive erases every kind with a cutoff far ahead: queued, sending and unknown
// messages keep their payload and record.
func testRetentionLive(t *testing.T, b *bundle) {
	b.inState("m-unknown", engine.DispatchUnknown)
	b.inState("m-sending", engine.DispatchSending)
	b.accept("m-retrying")
	b.clock.Advance(time.Second)
	b.mustFinish(b.claimOne("m-retrying"), engine.AttemptTransient, engine.DispatchQueued, engine.ReportNone, "")
	b.inState("m-queued", engine.DispatchQueued)
	far := b.clock.Now().Add(1000 * 24 * time.Hour)
	for _, k := range engine.EraseKinds() {
		if k == engine.EraseSubmissionReceipts || k == engine.EraseProviderReceipts {
			continue
		}
		if n := b.erase(k, far, engine.MaxEraseBatch); n != 0 {
			t.Fatalf("%s erased %d items of live messages", k, n)
		}
	}
	for _, id := range []string{"m-unknown", "m-sending", "m-retrying", "m-queued"} {
		if m := b.message(id); m.PayloadErasedAt != nil {
			t.Fatalf("%s lost its payload: %+v", id, m)
		}
	}
	if r := b.apply(engine.ActionSettleNotSent, "m-unknown", ""); r.Err != nil {
		t.Fatalf("settle of the unknown message after the sweeps: %v", r.Err)
	}
	b.clock.Advance(2 * time.Hour)
	p := b.claim(10, 1<<20)
	if len(p.Claims) != 3 {
		t.Fatalf("claimed %v, want the retrying, queued and settled messages", claimIDs(p))
	}
	for _, c := range p.Claims {
		if c.Payload.Recipient == "" || c.Payload.Parts["text"] == "" {
			t.Fatalf("%s was claimed without its payload", c.Message.ID)
		}
	}
}
