package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// inboxListJSON is the output of `inbox list -o json`.
type inboxListJSON struct {
	OK      bool             `json:"ok"`
	Entries []inboxEntryJSON `json:"entries"`
	Next    string           `json:"next"`
}

func TestInboxList(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	rt := e.stack.rt.Path
	at := e.clock.Now()
	long := strings.Repeat("ab\t", 40) // tabs must not break the table
	stored := []engine.InboxEntry{
		putInboxEntry(t, e.stack.store, "m-1", []byte("hello\nthere"), 1, at),
		putInboxEntry(t, e.stack.store, "m-2", []byte{0xff, 0x00}, 2, at.Add(time.Second)),
		putInboxEntry(t, e.stack.store, "m-3", []byte(long), 3, at.Add(2*time.Second)),
	}

	list := func(args ...string) inboxListJSON {
		t.Helper()
		out, errOut, code := cli(t, append([]string{"--config", rt, "-o", "json", "inbox", "list"}, args...)...)
		if code != 0 {
			t.Fatalf("inbox list %v: exit %d: %s %s", args, code, out, errOut)
		}
		var v inboxListJSON
		if err := json.Unmarshal([]byte(out), &v); err != nil || !v.OK {
			t.Fatalf("inbox list %v: %q: %v", args, out, err)
		}
		return v
	}
	first := list("--limit", "2")
	if len(first.Entries) != 2 || first.Entries[0].ID != stored[0].ID || first.Entries[1].ID != stored[1].ID || first.Next != stored[1].ID {
		t.Fatalf("first page: %+v", first)
	}
	if g := first.Entries[0]; g.MessageID != "m-1" || g.From != inboxSender || g.Payload == nil || *g.Payload != "hello\nthere" ||
		g.PayloadBytes != 11 || !g.ReceivedAt.Equal(stored[0].ReceivedAt) {
		t.Fatalf("first entry: %+v", g)
	}
	if g := first.Entries[1]; g.Payload != nil || g.PayloadBase64 != "/wA=" {
		t.Fatalf("binary entry: %+v", g)
	}
	rest := list("--after", first.Next)
	if len(rest.Entries) != 1 || rest.Entries[0].ID != stored[2].ID || rest.Next != stored[2].ID {
		t.Fatalf("second page: %+v", rest)
	}
	if end := list("--after", strings.ToUpper(rest.Next)); len(end.Entries) != 0 || end.Next != stored[2].ID {
		t.Fatalf("after the last entry: %+v", end)
	}

	out, errOut, code := cli(t, "--config", rt, "inbox", "list")
	if code != 0 {
		t.Fatalf("inbox list: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "ID") || lines[4] != "next: "+stored[2].ID+" (read on with --after "+stored[2].ID+")" {
		t.Fatalf("human output:\n%s", out)
	}
	if !strings.Contains(lines[1], `"hello\nthere"`) || !strings.Contains(lines[2], "(binary") ||
		!strings.Contains(lines[3], `…"`) || strings.Contains(lines[3], long) || strings.Contains(lines[3], "\t") {
		t.Fatalf("human lines do not preview payloads safely:\n%s", out)
	}

	for _, args := range [][]string{
		{"--config", rt, "inbox", "list", "--limit", "0"},
		{"--config", rt, "inbox", "list", "--limit", "1001"},
		{"--config", rt, "inbox", "list", "--after", "yesterday"},
		{"--config", rt, "inbox", "list", "extra"},
		{"inbox", "list"},
		{"inbox"},
	} {
		if _, _, code := cli(t, args...); code != 2 {
			t.Fatalf("%v: exit %d, want 2", args, code)
		}
	}
	// A database that is not there is never created by a command line tool: exit 3.
	missing := editRuntime(t, rt, "missing-db.yaml", func(doc map[string]any) {
		doc["database"].(map[string]any)["path"] = filepath.Join(t.TempDir(), "absent.db")
	})
	out, _, code = cli(t, "--config", missing, "-o", "json", "inbox", "list")
	if code != 3 || diagnosticCode(t, out) != "database.unreachable" {
		t.Fatalf("a missing database: exit %d, %s", code, out)
	}
}

// TestInboxListShowsChannelAndProvider: the human listing says where each entry came from, a
// peer's envelope or a gateway's inbound SMS, and which provider took it.
func TestInboxListShowsChannelAndProvider(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	at := e.clock.Now()
	peer := engine.InboxEntry{Channel: engine.ChannelPeer, Provider: "peer-host", From: inboxSender, To: "12D3KooWHost",
		Protocol: inboxProtocol, MessageID: "m-1", TsMs: 1, ReceivedAt: at, Payload: []byte("hello"),
		Respond: func(id string) []byte { return []byte(`{"accepted":true,"inboxId":"` + id + `"}`) }}
	if _, err := e.stack.store.PutInbox(context.Background(), peer); err != nil {
		t.Fatal(err)
	}
	sms := engine.InboundItem{From: "+15550100999", To: "+15550100000", Text: "yes", ProviderReference: "gw-7", ReceivedAt: at}
	if _, err := e.stack.store.PutInbound(context.Background(), "sms-gateway", engine.ChannelSMS, []engine.InboundItem{sms}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, "--config", e.stack.rt.Path, "inbox", "list")
	if code != 0 {
		t.Fatalf("inbox list: exit %d: %s", code, errOut)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		rows = append(rows, strings.Fields(line))
	}
	if len(rows) != 4 || strings.Join(rows[0], " ") != "ID CHANNEL PROVIDER FROM PROTOCOL MESSAGE ID RECEIVED BYTES PAYLOAD" {
		t.Fatalf("human output:\n%s", out)
	}
	for i, want := range [][]string{
		{"peer", "peer-host", inboxSender, inboxProtocol, `"m-1"`},
		{"sms", "sms-gateway", "+15550100999", "-", `"gw-7"`},
	} {
		if got := rows[i+1][1:6]; strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("entry %d shows %q, want %q:\n%s", i+1, got, want, out)
		}
	}
}
