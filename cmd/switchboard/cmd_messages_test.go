package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

// TestMessagesActionPreviewApplyRefuse drives each action on one message through the binary,
// while the in-process stack holds the same database: a preview changes nothing, --apply
// changes exactly what the preview said and journals it, and an ineligible message is refused
// with exit 1.
func TestMessagesActionPreviewApplyRefuse(t *testing.T) {
	t.Parallel()
	f := newOpsFixture(t)
	failed := f.inState(1, engine.DispatchFailed)[0]
	unknown := f.inState(2, engine.DispatchUnknown)
	queued := f.inState(1, engine.DispatchQueued)[0] // last: inState claims every due message
	cases := []struct {
		args    []string
		id      string
		preview string
		to      engine.Dispatch
		gen     int
	}{
		{[]string{"cancel", queued}, queued, "cancel " + queued + ": queued -> cancelled", engine.DispatchCancelled, 1},
		{[]string{"retry", failed}, failed, "retry " + failed + ": failed -> queued (generation 2)", engine.DispatchQueued, 2},
		{[]string{"settle", unknown[0], "--outcome", "sent"}, unknown[0], "settle " + unknown[0] + ": unknown -> submitted", engine.DispatchSubmitted, 1},
		{[]string{"settle", unknown[1], "--outcome", "not-sent"}, unknown[1], "settle " + unknown[1] + ": unknown -> queued (generation 2)", engine.DispatchQueued, 2},
	}
	for _, c := range cases {
		before, records := f.message(c.id), f.journal()
		out, errOut, code := f.run(append([]string{"messages"}, c.args...)...)
		if code != 0 || out != c.preview+"\n" || !strings.Contains(errOut, "--apply") {
			t.Fatalf("preview %v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
		if after := f.message(c.id); after.Dispatch != before.Dispatch || !after.UpdatedAt.Equal(before.UpdatedAt) || f.journal() != records {
			t.Fatalf("preview %v changed the message or the journal", c.args)
		}
		out, errOut, code = f.run(append(append([]string{"messages"}, c.args...), "--apply")...)
		if code != 0 || out != c.preview+": applied\n" {
			t.Fatalf("apply %v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
		if m := f.message(c.id); m.Dispatch != c.to || m.Generation != c.gen {
			t.Fatalf("after %v: %s generation %d, want %s %d", c.args, m.Dispatch, m.Generation, c.to, c.gen)
		}
		if f.journal() != records+1 {
			t.Fatalf("apply %v was not journaled exactly once", c.args)
		}
		// The same action again: the message is no longer eligible.
		out, errOut, code = f.run(append(append([]string{"messages"}, c.args...), "--apply")...)
		if code != 1 || out != "" || !strings.Contains(errOut, "error[message.not-eligible] "+c.id+": ") {
			t.Fatalf("second apply %v: exit %d, stdout %q, stderr %q", c.args, code, out, errOut)
		}
	}
	var actors []string
	if err := f.st.ExportAudit(f.ctx, time.Time{}, func(r store.AuditRecord) error {
		if r.Event == "message.retried" || r.Event == "message.settled" || r.Event == "message.cancelled" {
			actors = append(actors, r.Actor)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(actors, ",") != "operator-tool,operator-tool,operator-tool,operator-tool" {
		t.Fatalf("journal actors %v, want operator-tool for each action", actors)
	}

	// JSON output, and the usage and refusal exit codes.
	retry := f.inState(1, engine.DispatchFailed)[0]
	out, _, code := f.run("messages", "retry", retry, "--apply", "-o", "json")
	doc := jsonOut(t, out)
	changes, _ := doc["changes"].([]any)
	if code != 0 || doc["ok"] != true || doc["applied"] != true || len(changes) != 1 ||
		changes[0].(map[string]any)["generation"] != 2.0 || changes[0].(map[string]any)["to"] != "queued" {
		t.Fatalf("retry -o json: exit %d, %s", code, out)
	}
	out, _, code = f.run("messages", "retry", retry, "--apply", "-o", "json")
	if doc := jsonOut(t, out); code != 1 || doc["ok"] != false || !strings.Contains(out, `"code":"message.not-eligible"`) {
		t.Fatalf("refused retry -o json: exit %d, %s", code, out)
	}
	for _, c := range []struct {
		args []string
		exit int
		code string
	}{
		{[]string{"messages", "retry", "0190f5a0-0000-7000-8000-ffffffffffff"}, 1, "message.not-visible"},
		{[]string{"messages", "settle", unknown[0]}, 2, "usage"},
		{[]string{"messages", "settle", unknown[0], "--outcome", "maybe"}, 2, "usage"},
		{[]string{"messages", "retry", retry, "--status", "failed", "--before", "now"}, 2, "usage"},
		{[]string{"messages", "retry", "--status", "failed"}, 2, "usage"},
		{[]string{"messages", "retry", "--status", "failed", "--before", "yesterday-ish"}, 2, "usage"},
		{[]string{"messages", "retry", "--status", "queued", "--before", "now"}, 1, "message.not-eligible"},
		{[]string{"messages", "frobnicate"}, 2, "usage"},
	} {
		_, errOut, code := f.run(c.args...)
		if code != c.exit || !strings.Contains(errOut, "error["+c.code+"]") {
			t.Fatalf("%v: exit %d, stderr %q; want %d and %s", c.args, code, errOut, c.exit, c.code)
		}
	}
}

// TestMessagesBulkOn10000 cancels 10,000 queued messages with one bulk action: the preview
// counts them and lists the first lines, the apply changes exactly those in bounded batches
// with progress, and the process stays small.
func TestMessagesBulkOn10000(t *testing.T) {
	t.Parallel()
	const total = 10000
	f := newOpsFixture(t)
	f.e.clock.Set(time.Now().Add(-time.Hour))
	f.inState(total, engine.DispatchQueued)
	f.e.clock.Set(time.Now())
	later := f.inState(3, engine.DispatchQueued) // accepted after the cutoff: untouched
	cutoff := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)
	records := f.journal()

	out, _, code, previewRSS := f.runRSS("messages", "cancel", "--status", "queued", "--before", cutoff)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 12 || !strings.HasSuffix(lines[0], fmt.Sprintf(": %d message(s) would change", total)) ||
		!regexp.MustCompile(`^cancel \S+: queued -> cancelled$`).MatchString(lines[1]) || lines[11] != fmt.Sprintf("... and %d more", total-10) {
		t.Fatalf("bulk preview: exit %d\n%s", code, out)
	}
	if n := f.count(engine.MessageQuery{Dispatch: engine.DispatchQueued}); n != total+3 || f.journal() != records {
		t.Fatalf("the preview changed something: %d queued", n)
	}

	out, errOut, code, applyRSS := f.runRSS("messages", "cancel", "--status", "queued", "--before", cutoff, "--apply")
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), fmt.Sprintf(": %d changed, 0 skipped (changed meanwhile), 20 batch(es)", total)) {
		t.Fatalf("bulk apply: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var progress []string
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if strings.HasPrefix(l, "cancel: ") {
			progress = append(progress, strings.TrimPrefix(l, "cancel: "))
		}
	}
	if len(progress) != 20 || progress[0] != "500/10000" || progress[19] != "10000/10000" {
		t.Fatalf("progress lines %v", progress)
	}
	if n := f.count(engine.MessageQuery{Dispatch: engine.DispatchCancelled}); n != total {
		t.Fatalf("%d cancelled, want %d", n, total)
	}
	for _, id := range later {
		if m := f.message(id); m.Dispatch != engine.DispatchQueued {
			t.Fatalf("a message accepted after --before was changed: %s", m.Dispatch)
		}
	}
	if f.journal() != records+total {
		t.Fatal("the bulk action was not journaled once per message")
	}
	// Batches of 500 metadata rows: the apply needs no more memory than the preview but the
	// pages its writes pass through SQLite's page cache of the write connection (16 MiB,
	// store.Config.writeDSN), which a preview never fills. Measured in this race-enabled binary:
	// the apply's peak RSS rises with the pages it wrote and then stays, 96, 101, 110, 128 and
	// 131 MiB for 100, 1,000, 10,000, 30,000 and 60,000 messages, against a preview of 94-97 MiB.
	t.Logf("peak RSS: preview %d MiB, apply %d MiB", previewRSS>>20, applyRSS>>20)
	if previewRSS > 0 && applyRSS > previewRSS+(16+6)<<20 {
		t.Fatalf("peak RSS of the bulk apply %d MiB, preview %d MiB: memory grows with the number of messages", applyRSS>>20, previewRSS>>20)
	}

	out, _, code = f.run("messages", "cancel", "--status", "queued", "--before", "now", "--apply", "-o", "json")
	doc := jsonOut(t, out)
	if code != 0 || doc["matched"] != 3.0 || doc["changed"] != 3.0 || doc["batches"] != 1.0 {
		t.Fatalf("bulk -o json: exit %d, %s", code, out)
	}
}

// TestMessagesListAndShow reads metadata only: no recipient, no content, ever.
func TestMessagesListAndShow(t *testing.T) {
	t.Parallel()
	f := newOpsFixture(t)
	sent := f.inState(1, engine.DispatchSubmitted)[0]
	f.e.clock.Advance(time.Second)
	failed := f.inState(2, engine.DispatchFailed)
	f.e.clock.Advance(time.Second)
	queued := f.inState(1, engine.DispatchQueued)[0]

	out, _, code := f.run("messages", "list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 || !strings.HasPrefix(lines[0], "ID") || !strings.HasPrefix(lines[1], queued+" ") ||
		!strings.HasPrefix(lines[4], sent+" ") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	if f := strings.Fields(lines[2]); len(f) != 9 || f[1] != "failed" || f[2] != "failed" || f[3] != "sms" || f[4] != "reminders-sms" || f[5] != "1" || f[6] != "1" {
		t.Fatalf("list line %q", lines[2])
	}
	out, _, code = f.run("messages", "list", "--status", "failed", "--limit", "1", "-o", "json")
	doc := jsonOut(t, out)
	msgs, _ := doc["messages"].([]any)
	if code != 0 || len(msgs) != 1 || msgs[0].(map[string]any)["id"] != failed[1] || msgs[0].(map[string]any)["status"] != "failed" {
		t.Fatalf("list --status failed -o json: exit %d, %s", code, out)
	}
	out, _, code = f.run("messages", "show", sent, "-o", "json")
	v, _ := jsonOut(t, out)["message"].(map[string]any)
	attempts, _ := v["attempts"].([]any)
	if code != 0 || v["status"] != "submitted" || v["providerReference"] != "ref-"+sent || len(attempts) != 1 ||
		attempts[0].(map[string]any)["providerReference"] != "ref-"+sent || attempts[0].(map[string]any)["outcome"] != "accepted" ||
		v["reason"] != nil {
		t.Fatalf("show -o json: exit %d, %s", code, out)
	}
	out, _, code = f.run("messages", "show", failed[0], "-o", "json")
	v, _ = jsonOut(t, out)["message"].(map[string]any)
	if reason, _ := v["reason"].(map[string]any); code != 0 || len(reason) != 2 || reason["code"] != "gateway.permanent" || reason["by"] != "provider" {
		t.Fatalf("show -o json of a failed message: exit %d, %s", code, out)
	}
	out, _, code = f.run("messages", "show", failed[0])
	if code != 0 || !regexp.MustCompile(`(?m)^  1 +1 +permanent +gateway\.permanent +sms-gateway +- `).MatchString(out) ||
		!regexp.MustCompile(`(?m)^reason: +gateway\.permanent \(by provider\)$`).MatchString(out) ||
		!strings.Contains(out, "to:") || !strings.Contains(out, "phone (redacted)") {
		t.Fatalf("show: exit %d\n%s", code, out)
	}
	if out, _, _ = f.run("messages", "show", sent); strings.Contains(out, "reason:") {
		t.Fatalf("show of a submitted message has a reason:\n%s", out)
	}
	for _, args := range [][]string{{"messages", "list", "-o", "json"}, {"messages", "show", sent}, {"messages", "show", sent, "-o", "json"}} {
		out, _, _ := f.run(args...)
		if strings.Contains(out, testPhone) || strings.Contains(out, "Riverside") {
			t.Fatalf("%v shows a recipient or content:\n%s", args, out)
		}
	}
	if _, errOut, code := f.run("messages", "list", "--status", "lost"); code != 2 || !strings.Contains(errOut, "error[usage]") {
		t.Fatalf("unknown status: exit %d, %s", code, errOut)
	}
	if _, errOut, code := f.run("messages", "show", "0190f5a0-0000-7000-8000-ffffffffffff"); code != 1 || !strings.Contains(errOut, "error[message.not-visible]") {
		t.Fatalf("absent message: exit %d, %s", code, errOut)
	}
}
