package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/store"
)

// smsSubmission is a quickstart SMS built from the template's own sample data.
func smsSubmission(t *testing.T, dir string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "templates", "appointment-reminder-sms", "1", "sample.json"))
	if err != nil {
		t.Fatalf("read sample: %v", err)
	}
	var data any
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatalf("decode sample: %v", err)
	}
	return map[string]any{
		"senderProfile": "reminders-sms",
		"to":            map[string]string{"phone": "+15550100123"},
		"template":      map[string]string{"id": "appointment-reminder-sms", "version": "1"},
		"locale":        "en",
		"data":          data,
	}
}

func TestDevDeliversQuickstartSMS(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	s := startDev(t, dir)
	token := s.token("case-system")

	var accepted map[string]any
	resp, raw := s.do("POST", "/v1/messages", token, "sms-1", smsSubmission(t, dir), &accepted)
	if resp.StatusCode != 202 {
		t.Fatalf("submit: %d %s", resp.StatusCode, raw)
	}
	if resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("Cache-Control = %q", resp.Header.Get("Cache-Control"))
	}
	id, _ := accepted["id"].(string)
	if id == "" || accepted["status"] != "queued" {
		t.Fatalf("202 body %s", raw)
	}
	view := s.waitStatus(token, id, 30*time.Second, "delivered")
	if view["dispatch"] != "submitted" || view["report"] != "delivered" {
		t.Fatalf("view %v", view)
	}
	to, _ := view["to"].(map[string]any)
	if to["phone"] != "redacted" || strings.Contains(string(mustJSON(t, view)), "+15550100123") {
		t.Fatalf("recipient not redacted: %v", view)
	}
	attempts, _ := view["attempts"].([]any)
	if len(attempts) != 1 {
		t.Fatalf("attempts %v", attempts)
	}

	// The same key and body answer the first 202 again, and make no second message.
	var replay map[string]any
	resp, raw = s.do("POST", "/v1/messages", token, "sms-1", smsSubmission(t, dir), &replay)
	if resp.StatusCode != 202 || replay["id"] != id {
		t.Fatalf("replay: %d %s", resp.StatusCode, raw)
	}
	// The same key with another body is refused.
	other := smsSubmission(t, dir)
	other["to"] = map[string]string{"phone": "+15550100999"}
	resp, raw = s.do("POST", "/v1/messages", token, "sms-1", other, nil)
	if resp.StatusCode != 409 || !strings.Contains(string(raw), "idempotency.key-reused") {
		t.Fatalf("reuse: %d %s", resp.StatusCode, raw)
	}
	checkListenerWall(t, strings.TrimPrefix(s.session.API, "http://"))
	if code := s.stop(); code != 0 {
		t.Fatalf("SIGTERM exit code %d, want 0", code)
	}
}

func TestAcceptedMessageSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	s := startDev(t, dir)
	token := s.token("case-system")
	var ids []string
	for i := 0; i < 20; i++ {
		var accepted map[string]any
		resp, raw := s.do("POST", "/v1/messages", token, "kill-"+string(rune('a'+i)), smsSubmission(t, dir), &accepted)
		if resp.StatusCode != 202 {
			t.Fatalf("submit: %d %s", resp.StatusCode, raw)
		}
		ids = append(ids, accepted["id"].(string))
	}
	s.kill() // right after the last 202

	s2 := startDev(t, dir)
	token = s2.token("case-system")
	for _, id := range ids {
		// Every accepted message is still there, and ends sent (delivered, or submitted when its
		// receipt died with the old mock gateway) or, if it was mid-send when the process died,
		// unknown: never lost, never silently sent twice.
		s2.waitStatus(token, id, 90*time.Second, "delivered", "submitted", "unknown")
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// templateSubmission builds a quickstart submission from a template's own sample data.
func templateSubmission(t *testing.T, dir, profile, template string, to map[string]string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "templates", template, "1", "sample.json"))
	if err != nil {
		t.Fatal(err)
	}
	var data any
	if err := json.Unmarshal(raw, &data); err != nil {
		t.Fatal(err)
	}
	return map[string]any{"senderProfile": profile, "to": to,
		"template": map[string]string{"id": template, "version": "1"}, "locale": "en", "data": data}
}

func TestDevDeliversEmailAndPeerMessages(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	s := startDev(t, dir)
	token := s.token("case-system")
	if s.session.SMTP == "" || s.session.Companion == nil || s.session.Companion.PeerID == "" {
		t.Fatalf("session.json lacks the SMTP sink or the companion peer: %+v", s.session)
	}

	// Email: relayed to the dev SMTP sink, signed with DKIM.
	var accepted map[string]any
	resp, raw := s.do("POST", "/v1/messages", token, "mail-1",
		templateSubmission(t, dir, "reminders-email", "appointment-reminder", map[string]string{"email": "patient@example.net"}), &accepted)
	if resp.StatusCode != 202 {
		t.Fatalf("email: %d %s", resp.StatusCode, raw)
	}
	view := s.waitStatus(token, accepted["id"].(string), 30*time.Second, "submitted")
	if view["report"] != "unavailable" {
		t.Fatalf("email report %v, want unavailable", view["report"])
	}
	mails, _ := filepath.Glob(filepath.Join(s.session.MailDir, "*.eml"))
	if len(mails) != 1 {
		t.Fatalf("%d .eml files in %s, want 1", len(mails), s.session.MailDir)
	}
	eml, _ := os.ReadFile(mails[0])
	if !strings.Contains(string(eml), "dkim=pass") || !strings.Contains(string(eml), "DKIM-Signature:") {
		t.Fatalf("the mail's DKIM signature did not verify:\n%.600s", eml)
	}

	// Peer: delivered to the companion over libp2p; the acknowledgement is the receipt.
	resp, raw = s.do("POST", "/v1/messages", token, "peer-1",
		templateSubmission(t, dir, "case-peers", "case-update", map[string]string{"peer": s.session.Companion.PeerID}), &accepted)
	if resp.StatusCode != 202 {
		t.Fatalf("peer: %d %s", resp.StatusCode, raw)
	}
	id := accepted["id"].(string)
	s.waitStatus(token, id, 30*time.Second, "delivered")
	st, err := store.Open(context.Background(), store.Config{Path: s.session.Companion.Database,
		AuditKey: []byte("0123456789abcdef0123456789abcdef")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, _, err := st.ListInbox(context.Background(), "", 10)
	if err != nil || len(entries) != 1 || entries[0].MessageID != id {
		t.Fatalf("companion inbox: %v %+v", err, entries)
	}
}
