package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
