package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// TestRetentionEraseExpired runs `retention erase-expired` on messages that became final 100
// days, 10 days and a moment ago, next to one held in unknown for 100 days (the quickstart
// runtime keeps payloads 7 days, records 90, receipts 7): the preview counts and changes
// nothing, --apply erases exactly that, and the unknown message survives.
func TestRetentionEraseExpired(t *testing.T) {
	t.Parallel()
	f := newOpsFixture(t)
	now := time.Now()
	at := func(age time.Duration, n int, d engine.Dispatch) []string {
		f.e.clock.Set(now.Add(-age))
		ids := f.inState(n, d)
		if d == engine.DispatchQueued {
			for _, id := range ids {
				f.cancel(id)
			}
		}
		return ids
	}
	old := at(100*24*time.Hour, 2, engine.DispatchFailed)
	unknown := at(100*24*time.Hour, 1, engine.DispatchUnknown)[0]
	mid := at(10*24*time.Hour, 1, engine.DispatchQueued)[0] // cancelled
	fresh := at(time.Minute, 1, engine.DispatchQueued)[0]
	records := f.journal()

	out, errOut, code := f.run("retention", "erase-expired")
	if code != 0 || !strings.HasPrefix(out, "retention as of ") || !strings.Contains(out, ": would erase 9 item(s)\n") ||
		!strings.Contains(errOut, "--apply") {
		t.Fatalf("preview: exit %d\n%s%s", code, out, errOut)
	}
	for kind, n := range map[string]string{"payloads": "3", "records": "2", "submission-receipts": "4", "inbox-payloads": "0"} {
		i := strings.Index(out, "  "+kind+" ")
		if i < 0 || strings.Fields(out[i:])[1] != n {
			t.Fatalf("preview lacks %s %s:\n%s", kind, n, out)
		}
	}
	if m := f.message(old[0]); m.PayloadErasedAt != nil || f.journal() != records {
		t.Fatal("the preview erased something")
	}

	out, _, code = f.run("retention", "erase-expired", "--apply", "-o", "json")
	doc := jsonOut(t, out)
	counts := map[string]float64{}
	for _, k := range doc["kinds"].([]any) {
		counts[k.(map[string]any)["kind"].(string)] = k.(map[string]any)["count"].(float64)
	}
	if code != 0 || doc["applied"] != true || doc["total"] != 9.0 || counts["payloads"] != 3 || counts["records"] != 2 || counts["submission-receipts"] != 4 {
		t.Fatalf("apply: exit %d, %s", code, out)
	}
	for _, id := range old {
		if _, err := f.st.Message(f.ctx, id); !errors.Is(err, engine.ErrNotFound) {
			t.Fatalf("the record of %s outlived recordDays: %v", id, err)
		}
	}
	if m := f.message(mid); m.PayloadErasedAt == nil || m.Dispatch != engine.DispatchCancelled {
		t.Fatalf("10 days after cancel: %+v", m)
	}
	for _, id := range []string{unknown, fresh} {
		if m := f.message(id); m.PayloadErasedAt != nil {
			t.Fatalf("%s lost its payload: %+v", id, m)
		}
	}
	// One journal record per batch: payloads, submission receipts, records.
	if got := f.journal(); got != records+3 {
		t.Fatalf("the erasure made %d journal records, want 3", got-records)
	}
	out, _, code = f.run("retention", "erase-expired", "--before", "now", "-o", "json")
	if doc := jsonOut(t, out); code != 0 || doc["total"] != 0.0 || doc["applied"] != false {
		t.Fatalf("a second preview: exit %d, %s", code, out)
	}
	future := now.Add(time.Hour).UTC().Format(time.RFC3339)
	if _, errOut, code := f.run("retention", "erase-expired", "--before", future, "--apply"); code != 1 || !strings.Contains(errOut, "error[request.invalid] retention: the retention cutoff is in the future") {
		t.Fatalf("a future cutoff: exit %d, %s", code, errOut)
	}
	if _, errOut, code := f.run("retention", "erase-expired", "--before", "soon"); code != 2 || !strings.Contains(errOut, "error[usage]") {
		t.Fatalf("a malformed cutoff: exit %d, %s", code, errOut)
	}
}
