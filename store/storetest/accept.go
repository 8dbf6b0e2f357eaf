package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
)

func acceptTests() []namedTest {
	return []namedTest{
		{"ReadBack", testAcceptReadBack},
		{"ResultsInOrder", testAcceptResultsInOrder},
		{"ReplaySameHash", testAcceptReplay},
		{"KeyReusedOtherHash", testAcceptKeyReused},
		{"KeyExpired", testAcceptKeyExpired},
		{"KeyScopedToCaller", testAcceptKeyScoped},
		{"RacingOneKey", testAcceptRacingOneKey},
		{"OneFailsOthersCommit", testAcceptPartialBatch},
		{"DailyQuota", testAcceptDailyQuota},
		{"DailyQuotaRacing", testAcceptDailyQuotaRacing},
	}
}

func testAcceptReadBack(t *testing.T, b *bundle) {
	nb := Epoch().Add(time.Hour)
	a := b.acceptance("m-1", withNotBefore(nb), withNextAttempt(nb))
	res := b.store.Accept(b.ctx, []engine.Acceptance{a})
	if res[0].Err != nil || res[0].Replayed || res[0].MessageID != "m-1" || !bytes.Equal(res[0].Response, a.Idempotency.Response) {
		t.Fatalf("Accept = %+v", res[0])
	}
	m := b.message("m-1")
	want := a.Message
	if m.ID != want.ID || m.Dispatch != engine.DispatchQueued || m.Report != engine.ReportNone ||
		m.Channel != want.Channel || m.SenderProfile != want.SenderProfile || m.Provider != want.Provider ||
		m.RecipientKind != want.RecipientKind || m.TemplateID != want.TemplateID ||
		m.TemplateVersion != want.TemplateVersion || m.Locale != want.Locale ||
		m.CorrelationID != want.CorrelationID || m.AccessProfile != want.AccessProfile ||
		m.Caller != want.Caller || m.Generation != 1 || m.Attempt != 0 || m.Status() != "queued" {
		t.Fatalf("read back %+v, accepted %+v", m, want)
	}
	if !m.AcceptedAt.Equal(want.AcceptedAt) || !m.ExpiresAt.Equal(want.ExpiresAt) ||
		!m.UpdatedAt.Equal(want.UpdatedAt) || !m.NextAttemptAt.Equal(nb) ||
		m.NotBefore == nil || !m.NotBefore.Equal(nb) {
		t.Fatalf("times read back %+v, accepted %+v", m, want)
	}
	if m.FinalAt != nil || m.ReportedAt != nil || m.PayloadErasedAt != nil || len(m.Attempts) != 0 {
		t.Fatalf("a new message has final, reported or erased times or attempts: %+v", m)
	}
	if m.PayloadBytes <= int64(len("Hello m-1")) {
		t.Fatalf("PayloadBytes = %d, want at least the rendered text", m.PayloadBytes)
	}
	// A size the engine measured is the one the byte budget counts.
	sized := b.acceptance("m-2")
	sized.Message.PayloadBytes = 12345
	if r := b.store.Accept(b.ctx, []engine.Acceptance{sized})[0]; r.Err != nil {
		t.Fatal(r.Err)
	}
	if got := b.message("m-2").PayloadBytes; got != 12345 {
		t.Fatalf("PayloadBytes = %d, want the accepted 12345", got)
	}
	if _, err := b.store.Message(b.ctx, "m-absent"); err == nil {
		t.Fatal("Message of an absent id: no error")
	} else {
		wantErr(t, "Message(absent)", err, engine.ErrNotFound)
	}
}

func testAcceptResultsInOrder(t *testing.T, b *bundle) {
	batch := []engine.Acceptance{b.acceptance("m-c"), b.acceptance("m-a"), b.acceptance("m-b")}
	res := b.store.Accept(b.ctx, batch)
	if len(res) != 3 {
		t.Fatalf("%d results for 3 acceptances", len(res))
	}
	for i, r := range res {
		if r.Err != nil || r.MessageID != batch[i].Message.ID || !bytes.Equal(r.Response, batch[i].Idempotency.Response) {
			t.Fatalf("result %d = %+v, want message %s", i, r, batch[i].Message.ID)
		}
	}
}

func testAcceptReplay(t *testing.T, b *bundle) {
	first := b.accept("m-1", withKey("k", "body"))
	b.clock.Advance(time.Minute)
	res := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance("m-2", withKey("k", "body"))})
	r := res[0]
	if r.Err != nil || !r.Replayed || r.MessageID != "m-1" || !bytes.Equal(r.Response, first.Response) {
		t.Fatalf("replay = %+v, want the first answer of m-1", r)
	}
	_, err := b.store.Message(b.ctx, "m-2")
	wantErr(t, "Message(m-2) after a replay", err, engine.ErrNotFound)
	st, err := b.store.Stats(b.ctx, b.clock.Now())
	if err != nil || st.QueuedEntries != 1 {
		t.Fatalf("Stats = %+v, %v; want 1 queued", st, err)
	}
}

func testAcceptKeyReused(t *testing.T, b *bundle) {
	b.accept("m-1", withKey("k", "body"))
	res := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance("m-2", withKey("k", "another body"))})
	wantErr(t, "same key, other body", res[0].Err, engine.ErrIdempotencyKeyReused)
	if res[0].Replayed || res[0].Response != nil {
		t.Fatalf("refused acceptance carries an answer: %+v", res[0])
	}
}

func testAcceptKeyExpired(t *testing.T, b *bundle) {
	b.accept("m-1", withKey("k", "body"), withReceiptWindow(Epoch().Add(time.Hour)))
	b.clock.Advance(59 * time.Minute)
	if r := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance("m-2", withKey("k", "body"))})[0]; !r.Replayed {
		t.Fatalf("inside the window: %+v, want a replay", r)
	}
	b.clock.Advance(time.Minute) // exactly at the end of the window
	for _, body := range []string{"body", "another body"} {
		r := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance("m-3", withKey("k", body))})[0]
		wantErr(t, "after the window with "+body, r.Err, engine.ErrIdempotencyExpired)
	}
}

func testAcceptKeyScoped(t *testing.T, b *bundle) {
	b.accept("m-1", withKey("k", "body"))
	b.accept("m-2", withKey("k", "body"), withSubject("another-client"))
}

func testAcceptRacingOneKey(t *testing.T, b *bundle) {
	const racers = 50
	results := make([]engine.AcceptResult, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			a := b.acceptance(fmt.Sprintf("m-%02d", i), withKey("shared", "body"))
			results[i] = b.store.Accept(b.ctx, []engine.Acceptance{a})[0]
		})
	}
	wg.Wait()
	winner, fresh := "", 0
	for i, r := range results {
		if r.Err != nil {
			t.Fatalf("racer %d: %v", i, r.Err)
		}
		if !r.Replayed {
			fresh++
			winner = r.MessageID
		}
	}
	if fresh != 1 {
		t.Fatalf("%d racers made a message, want exactly 1", fresh)
	}
	for i, r := range results {
		if r.MessageID != winner || !bytes.Equal(r.Response, []byte(fmt.Sprintf(`{"id":%q,"status":"queued"}`, winner))) {
			t.Fatalf("racer %d got %+v, want the answer of %s", i, r, winner)
		}
	}
	st, err := b.store.Stats(b.ctx, b.clock.Now())
	if err != nil || st.QueuedEntries != 1 {
		t.Fatalf("Stats = %+v, %v; want exactly 1 message", st, err)
	}
}

func testAcceptPartialBatch(t *testing.T, b *bundle) {
	b.accept("m-0", withKey("k0", "body0"))
	dup := b.acceptance("m-1", withKey("k-dup", "body-dup")) // same id as the first of the batch
	batch := []engine.Acceptance{
		b.acceptance("m-1"),
		dup,
		b.acceptance("m-2", withKey("k0", "another body")),
		b.acceptance("m-3"),
		b.acceptance("m-4", withKey("k0", "body0")),
	}
	res := b.store.Accept(b.ctx, batch)
	if res[0].Err != nil || res[3].Err != nil || res[0].MessageID != "m-1" || res[3].MessageID != "m-3" {
		t.Fatalf("the valid acceptances failed: %+v", res)
	}
	if res[1].Err == nil {
		t.Fatalf("a second message with id m-1 was accepted: %+v", res[1])
	}
	wantErr(t, "key reused inside a batch", res[2].Err, engine.ErrIdempotencyKeyReused)
	if !res[4].Replayed || res[4].MessageID != "m-0" {
		t.Fatalf("replay inside a batch = %+v", res[4])
	}
	for _, id := range []string{"m-0", "m-1", "m-3"} {
		b.message(id)
	}
	// The failed acceptance left nothing behind: its key is still free.
	b.accept("m-5", withKey("k-dup", "body-dup"))
	st, err := b.store.Stats(b.ctx, b.clock.Now())
	if err != nil || st.QueuedEntries != 4 {
		t.Fatalf("Stats = %+v, %v; want 4 messages", st, err)
	}
}

func testAcceptDailyQuota(t *testing.T, b *bundle) {
	q := withQuota("limited", 3)
	b.accept("m-1", q)
	res := b.store.Accept(b.ctx, []engine.Acceptance{
		b.acceptance("m-2", q), b.acceptance("m-3", q), b.acceptance("m-4", q),
	})
	if res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("acceptances within the limit failed: %+v", res)
	}
	wantErr(t, "fourth acceptance of the day", res[2].Err, engine.ErrQuotaExceeded)
	if _, err := b.store.Message(b.ctx, "m-4"); err == nil {
		t.Fatal("a refused acceptance was stored")
	}
	// A replay makes no message: the quota does not refuse it.
	if r := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance("m-x", q, withKey("key-m-1", "body-m-1"))})[0]; !r.Replayed {
		t.Fatalf("replay over the quota = %+v", r)
	}
	// Other profiles count apart.
	b.accept("m-5", withQuota("other", 3))
	// The next UTC day starts a new count.
	b.clock.Set(time.Date(Epoch().Year(), Epoch().Month(), Epoch().Day()+1, 0, 0, 0, 0, time.UTC))
	b.accept("m-6", q)
}

func testAcceptDailyQuotaRacing(t *testing.T, b *bundle) {
	const racers, limit = 30, 10
	errs := make([]error, racers)
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			a := b.acceptance(fmt.Sprintf("m-%02d", i), withQuota("limited", limit))
			errs[i] = b.store.Accept(b.ctx, []engine.Acceptance{a})[0].Err
		})
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		default:
			wantErr(t, "racing over the quota", err, engine.ErrQuotaExceeded)
		}
	}
	if ok != limit {
		t.Fatalf("%d acceptances passed a daily limit of %d", ok, limit)
	}
}
