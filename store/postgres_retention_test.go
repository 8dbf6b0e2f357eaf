package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jmoiron/sqlx"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/store/pgtest"
)

// TestPostgresErasedRecordsTakeTheirChildren erases the record of a submitted message on
// PostgreSQL, whose attempts and payloads carry no foreign key to it (migration 0008): its
// attempt and its payload go with it, and a message still sending keeps its own. Then a plain
// DELETE behind the store's back, from a session whose search path is another schema (an
// operator at a SQL prompt, an instance of an earlier version), takes the children too.
func TestPostgresErasedRecordsTakeTheirChildren(t *testing.T) {
	url := pgtest.Schema(t)
	t.Parallel()
	ctx := context.Background()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s := openPostgres(t, url, enginetest.NewFakeClock(now))
	for _, id := range []string{"gone", "kept"} {
		a := engine.Acceptance{
			Message: engine.Message{ID: id, AcceptedAt: now, ExpiresAt: now.Add(time.Hour), NextAttemptAt: now},
			Payload: engine.Payload{Recipient: "+15550100"},
			Audit:   engine.AuditEntry{Event: "message.accepted"},
		}
		if r := s.Accept(ctx, []engine.Acceptance{a})[0]; r.Err != nil {
			t.Fatalf("Accept(%s): %v", id, r.Err)
		}
	}
	page, err := s.ClaimPage(ctx, now, engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(page.Claims) != 2 {
		t.Fatalf("ClaimPage = %d claims, %v; want 2", len(page.Claims), err)
	}
	for _, c := range page.Claims {
		if c.Message.ID != "gone" {
			continue
		}
		err := s.Finish(ctx, engine.Finish{Lease: c.Lease, Attempt: engine.AttemptAccepted,
			Dispatch: engine.DispatchSubmitted, Report: engine.ReportNone, ProviderRef: "ref-gone",
			ProviderAttempts: 1, FinishedAt: now,
			Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: "gone", At: now}})
		if err != nil {
			t.Fatalf("Finish(gone): %v", err)
		}
	}
	raw, err := sqlx.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := raw.GetContext(ctx, &n, q, args...); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const attempts = `SELECT count(*) FROM attempts WHERE message_id = $1`
	const payloads = `SELECT count(*) FROM payloads JOIN messages ON message_seq = seq WHERE id = $1`
	var goneSeq int64
	if err := raw.GetContext(ctx, &goneSeq, `SELECT seq FROM messages WHERE id = 'gone'`); err != nil {
		t.Fatal(err)
	}
	if count(attempts, "gone") != 1 || count(payloads, "gone") != 1 || count(payloads, "kept") != 1 {
		t.Fatal("before erasure: want an attempt and a payload for gone, and a payload for kept")
	}
	res, err := s.EraseBatch(ctx, engine.EraseBatch{Kind: engine.EraseRecords, Cutoff: now.Add(time.Minute),
		Limit: engine.MaxEraseBatch, At: now.Add(time.Minute)})
	if err != nil || res.Erased != 1 {
		t.Fatalf("EraseBatch(records) = %+v, %v; want 1 erased", res, err)
	}
	if n := count(attempts, "gone"); n != 0 {
		t.Fatalf("%d attempts of the erased record are left", n)
	}
	if n := count(`SELECT count(*) FROM payloads WHERE message_seq = $1`, goneSeq); n != 0 {
		t.Fatalf("%d payloads of the erased record are left", n)
	}
	if _, err := s.Message(ctx, "kept"); err != nil {
		t.Fatalf("Message(kept): %v", err)
	}
	if count(payloads, "kept") != 1 {
		t.Fatal("the message still sending lost its payload")
	}
	var schema string
	if err := raw.GetContext(ctx, &schema, `SELECT current_schema()`); err != nil {
		t.Fatal(err)
	}
	var keptSeq int64
	if err := raw.GetContext(ctx, &keptSeq, `SELECT seq FROM messages WHERE id = 'kept'`); err != nil {
		t.Fatal(err)
	}
	conn, err := raw.Connx(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SET search_path = public`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM `+pgx.Identifier{schema, "messages"}.Sanitize()+` WHERE id = 'kept'`); err != nil {
		t.Fatalf("a plain delete from another search path: %v", err)
	}
	if n := count(`SELECT count(*) FROM payloads WHERE message_seq = $1`, keptSeq); n != 0 {
		t.Fatalf("%d payloads of the deleted message are left", n)
	}
}
