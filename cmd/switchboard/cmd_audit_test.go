package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// journalOf8 makes a fixture whose store wrote exactly 8 records: 4 acceptances, then the
// claims and finishes of 2 of them (claims write no record) and 2 cancels.
func journalOf8(t *testing.T) *opsFixture {
	t.Helper()
	f := newOpsFixture(t)
	f.inState(2, engine.DispatchFailed)
	for _, id := range f.inState(2, engine.DispatchQueued) {
		f.cancel(id)
	}
	if n := f.journal(); n != 8 {
		t.Fatalf("setup wrote %d records, want 8", n)
	}
	return f
}

// TestAuditVerifyFindsTampering changes, deletes and swaps records behind the store's back:
// `audit verify` exits 1 and names the first broken record, printing it when it is still there.
func TestAuditVerifyFindsTampering(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		tamper []string // %[1]s is the writer id
		code   string
		seq    int
		shown  bool // the broken record is printed
	}{
		{"changed", []string{`UPDATE audit SET outcome = 'cancelled' WHERE writer = '%[1]s' AND seq = 4`}, "audit.record-changed", 4, true},
		{"deleted", []string{`DELETE FROM audit WHERE writer = '%[1]s' AND seq = 5`}, "audit.record-removed", 5, false},
		{"swapped", []string{
			`UPDATE audit SET seq = -1 WHERE writer = '%[1]s' AND seq = 3`,
			`UPDATE audit SET seq = 3 WHERE writer = '%[1]s' AND seq = 6`,
			`UPDATE audit SET seq = 6 WHERE writer = '%[1]s' AND seq = -1`,
		}, "audit.record-reordered", 3, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := journalOf8(t)
			out, _, code := f.run("audit", "verify")
			if code != 0 || out != "ok: 8 record(s) in 1 chain(s) verified\n" {
				t.Fatalf("intact journal: exit %d, %q", code, out)
			}
			writer := f.st.WriterID()
			db := f.raw()
			for _, stmt := range c.tamper {
				if _, err := db.Exec(fmt.Sprintf(stmt, writer)); err != nil {
					t.Fatal(err)
				}
			}
			out, errOut, code := f.run("audit", "verify")
			prefix := fmt.Sprintf("error[%s] audit/%s/%d: ", c.code, writer, c.seq)
			if code != 1 || out != "" || !strings.Contains(errOut, prefix) {
				t.Fatalf("after tampering: exit %d, stdout %q, stderr %q; want %q", code, out, errOut, prefix)
			}
			if shown := strings.Contains(errOut, fmt.Sprintf(`record {"writer":%q,"seq":%d,`, writer, c.seq)); shown != c.shown {
				t.Fatalf("broken record printed: %v, want %v\n%s", shown, c.shown, errOut)
			}
			out, _, code = f.run("audit", "verify", "-o", "json")
			var doc struct {
				OK          bool
				Diagnostics []struct{ Code, Path string }
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 || doc.OK || len(doc.Diagnostics) != 1 ||
				doc.Diagnostics[0].Code != c.code || doc.Diagnostics[0].Path != fmt.Sprintf("audit/%s/%d", writer, c.seq) {
				t.Fatalf("verify -o json: exit %d, %s", code, out)
			}
		})
	}
}

// TestAuditExportSince exports the journal as JSON lines from a time on, chained in order.
func TestAuditExportSince(t *testing.T) {
	t.Parallel()
	f := newOpsFixture(t)
	start := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	f.e.clock.Set(start)
	f.inState(3, engine.DispatchQueued)
	f.e.clock.Set(start.Add(time.Hour))
	recent := f.inState(2, engine.DispatchQueued)
	out, _, code := f.run("audit", "export", "--since", start.Add(time.Hour).UTC().Format(time.RFC3339))
	if code != 0 {
		t.Fatalf("export: exit %d", code)
	}
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var l map[string]any
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 2 || lines[0]["messageId"] != recent[0] || lines[1]["messageId"] != recent[1] ||
		lines[0]["seq"] != 4.0 || lines[1]["prevMac"] != lines[0]["mac"] || lines[0]["event"] != "message.accepted" ||
		!regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(lines[0]["mac"].(string)) || lines[0]["writer"] != f.st.WriterID() {
		t.Fatalf("export since the second hour:\n%s", out)
	}
	if strings.Contains(out, testPhone) || strings.Contains(out, "Riverside") {
		t.Fatalf("the export holds a recipient or content:\n%s", out)
	}
	out, _, code = f.run("audit", "export")
	if code != 0 || strings.Count(out, "\n") != 5 {
		t.Fatalf("export of everything: exit %d\n%s", code, out)
	}
	if _, errOut, code := f.run("audit", "export", "--since", "last tuesday"); code != 2 || !strings.Contains(errOut, "error[usage]") {
		t.Fatalf("bad --since: exit %d, %s", code, errOut)
	}
}
