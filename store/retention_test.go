package store_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/store"
	"switchboard/store/storetest"
)

// eraseAll runs one batch of kind at cutoff.
func eraseAll(t *testing.T, s *store.Store, kind engine.EraseKind, cutoff time.Time) int {
	t.Helper()
	res, err := s.EraseBatch(context.Background(), engine.EraseBatch{Kind: kind, Cutoff: cutoff, Limit: engine.MaxEraseBatch})
	if err != nil {
		t.Fatalf("EraseBatch(%s): %v", kind, err)
	}
	return res.Erased
}

// TestRetentionErasesTheStoredBytes looks behind the store's back: an erased payload's row is
// gone, and an erased submission receipt keeps its key but neither its answer nor its hash.
func TestRetentionErasesTheStoredBytes(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(storetest.Epoch())
	s := openTemp(t, clock)
	ctx := context.Background()
	mustAccept(t, s, "m-1", clock.Now())
	if res, err := s.ApplyOperatorActions(ctx, []engine.OperatorAction{{Action: engine.ActionCancel, MessageID: "m-1", At: clock.Now()}}); err != nil || res[0].Err != nil {
		t.Fatal(err, res)
	}
	now := clock.Advance(time.Hour)
	raw := openRaw(t, s)
	count := func(q string) int {
		t.Helper()
		var n int
		if err := raw.Get(&n, q); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if count(`SELECT count(*) FROM payloads`) != 1 {
		t.Fatal("the payload was not stored")
	}
	if n := eraseAll(t, s, engine.ErasePayloads, now); n != 1 {
		t.Fatalf("erased %d payloads", n)
	}
	if count(`SELECT count(*) FROM payloads`) != 0 {
		t.Fatal("the payload row is still there")
	}
	if n := eraseAll(t, s, engine.EraseSubmissionReceipts, now); n != 1 {
		t.Fatalf("erased %d receipts", n)
	}
	var rec struct {
		Response []byte        `db:"response"`
		Hash     []byte        `db:"request_hash"`
		ErasedAt sql.NullInt64 `db:"erased_at"`
	}
	if err := raw.Get(&rec, `SELECT response, request_hash, erased_at FROM idempotency WHERE key = 'key-m-1'`); err != nil {
		t.Fatalf("the spent key is gone: %v", err)
	}
	if rec.Response != nil || len(rec.Hash) != 0 || !rec.ErasedAt.Valid {
		t.Fatalf("erased receipt = %+v", rec)
	}
	if n := eraseAll(t, s, engine.EraseRecords, now); n != 1 {
		t.Fatalf("erased %d records", n)
	}
	if count(`SELECT count(*) FROM messages`)+count(`SELECT count(*) FROM attempts`) != 0 {
		t.Fatal("the record or its attempts are still there")
	}
	if count(`SELECT count(*) FROM idempotency`) != 1 {
		t.Fatal("erasing the record took the spent key with it")
	}
}

// TestRetentionOfTheInbox erases received peer messages: payloads after their window, entries
// later, both by arrival time.
func TestRetentionOfTheInbox(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(storetest.Epoch())
	s := openTemp(t, clock)
	raw := openRaw(t, s)
	t0 := storetest.Epoch()
	for i, id := range []string{"in-1", "in-2", "in-3"} {
		if _, err := raw.Exec(`INSERT INTO peer_inbox (id, from_peer, protocol, message_id, ts_ms, received_at,
			payload_bytes, payload) VALUES (?, 'peer', '/p', ?, 0, ?, 5, 'hello')`, id, "env-"+id, t0.Add(time.Duration(i)*time.Hour).UnixMilli()); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if n, err := s.CountErasable(ctx, engine.EraseInboxPayloads, t0.Add(time.Hour)); err != nil || n != 2 {
		t.Fatalf("inbox payloads erasable = %d, %v; want 2", n, err)
	}
	if n := eraseAll(t, s, engine.EraseInboxPayloads, t0.Add(time.Hour)); n != 2 {
		t.Fatalf("erased %d inbox payloads", n)
	}
	var kept []string
	if err := raw.Select(&kept, `SELECT id FROM peer_inbox WHERE payload IS NOT NULL AND payload_erased_at IS NULL ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if strings.Join(kept, ",") != "in-3" {
		t.Fatalf("inbox payloads kept: %v", kept)
	}
	if n := eraseAll(t, s, engine.EraseInboxRecords, t0); n != 1 {
		t.Fatalf("erased %d inbox entries at the first arrival, want 1", n)
	}
	if n, err := s.CountErasable(ctx, engine.EraseInboxRecords, t0.Add(2*time.Hour)); err != nil || n != 2 {
		t.Fatalf("inbox entries erasable = %d, %v; want 2", n, err)
	}
}

// TestRetentionBatchesAreJournaled checks that every batch that erased something left one
// verified record naming its kind and count, by the actor given.
func TestRetentionBatchesAreJournaled(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(storetest.Epoch())
	s := openTemp(t, clock)
	ctx := context.Background()
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		mustAccept(t, s, id, clock.Now())
		if res, err := s.ApplyOperatorActions(ctx, []engine.OperatorAction{{Action: engine.ActionCancel, MessageID: id, At: clock.Now()}}); err != nil || res[0].Err != nil {
			t.Fatal(err, res)
		}
	}
	cut := clock.Advance(time.Minute)
	for range 3 {
		if _, err := s.EraseBatch(ctx, engine.EraseBatch{Kind: engine.ErasePayloads, Cutoff: cut, Limit: 2,
			Audit: engine.AuditEntry{Actor: "operator-tool"}}); err != nil {
			t.Fatal(err)
		}
	}
	var outcomes []string
	err := s.ExportAudit(ctx, time.Time{}, func(r store.AuditRecord) error {
		if r.Event == "retention.erased" {
			if r.Actor != "operator-tool" || r.MessageID != "" {
				t.Errorf("retention record %+v", r)
			}
			outcomes = append(outcomes, r.Outcome)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "payloads 2 erased, cutoff " + cut.Format(time.RFC3339Nano) + "|payloads 1 erased, cutoff " + cut.Format(time.RFC3339Nano)
	if strings.Join(outcomes, "|") != want {
		t.Fatalf("retention records %q, want %q", outcomes, want)
	}
	if rep := verify(t, s); !rep.OK() || rep.Records != 3+3+2 {
		t.Fatalf("journal %+v, want 8 verified records", rep)
	}
}
