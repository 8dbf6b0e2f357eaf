package store_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/store/storetest"
)

// erasedMark starts every byte string the erasure test stores, so that it can look for
// what is left of any of them in the files.
const erasedMark = "ERASE-ME-7f3a9c"

// TestErasureLeavesNothingInTheFiles: after a retention run erased them, the recipients, the
// rendered text (a small one, and one large enough for overflow pages) and a received peer
// payload are in neither the database file nor its write-ahead log, read while the store is
// still open, as `strings switchboard.db` would read them.
func TestErasureLeavesNothingInTheFiles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "switchboard.db")
	clock := enginetest.NewFakeClock(storetest.Epoch())
	s := openAt(t, path, clock)
	ctx := context.Background()
	now := clock.Now()

	var accs []engine.Acceptance
	for i, copies := range []int{1, 1000} { // 1000 copies take overflow pages
		id := fmt.Sprintf("0190f5a0-0000-7000-8000-%012d", i+1)
		a := acceptance(id, now)
		a.Payload = engine.Payload{Recipient: fmt.Sprintf("%s-recipient-%d@example.org", erasedMark, i),
			Parts: map[string]string{"text": strings.Repeat(erasedMark+"-text ", copies)}}
		accs = append(accs, a)
	}
	for _, r := range s.Accept(ctx, accs) {
		if r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	// Kept messages beside them: their payloads stay, and the erased ones' pages are reused.
	for i := range 20 {
		mustAccept(t, s, fmt.Sprintf("0190f5a0-0000-7000-8000-%012d", 100+i), now)
	}
	page, err := s.ClaimPage(ctx, now, engine.PageLimits{MaxEntries: 2, MaxBytes: 1 << 30}, time.Minute)
	if err != nil || len(page.Claims) != 2 {
		t.Fatalf("claim: %d claims, %v", len(page.Claims), err)
	}
	for _, c := range page.Claims {
		if err := s.Finish(ctx, engine.Finish{Lease: c.Lease, Attempt: engine.AttemptAccepted, Dispatch: engine.DispatchSubmitted,
			Report: engine.ReportUnavailable, Provider: "gw", ProviderRef: "ref-" + c.Message.ID, ProviderAttempts: 1, FinishedAt: now,
			Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: c.Message.ID, Outcome: "accepted"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutInbox(ctx, engine.InboxEntry{From: "12D3KooWpeer", Protocol: "/p/1", MessageID: "m-1",
		ReceivedAt: now, Payload: []byte(erasedMark + "-peer-payload"), Respond: func(id string) []byte { return []byte(id) }}); err != nil {
		t.Fatal(err)
	}

	// Eight days on, everything written has long reached the database file.
	if err := s.Scrub(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(8 * 24 * time.Hour)
	r, err := engine.NewRetention(engine.RetentionConfig{Store: s, Clock: clock,
		Policy: engine.RetentionPolicy{PayloadDays: 7, RecordDays: 90, SubmissionReceiptDays: 7}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Erase(ctx, clock.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Total() < 3 {
		t.Fatalf("the run erased %d items, want the 2 payloads and the peer payload at least", rep.Total())
	}
	for _, suffix := range []string{"", "-wal"} {
		raw, err := os.ReadFile(path + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if n := bytes.Count(raw, []byte(erasedMark)); n > 0 {
			t.Errorf("%s still holds %d copies of erased text (%d bytes in the file)", filepath.Base(path+suffix), n, len(raw))
		}
	}
	// What was kept is still there.
	var kept int
	if err := openRaw(t, s).Get(&kept, `SELECT count(*) FROM payloads`); err != nil || kept != 20 {
		t.Fatalf("%d payloads kept, %v; want the 20 that did not expire", kept, err)
	}
}
