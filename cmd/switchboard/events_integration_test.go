package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine/webhooks/receiver"
)

// devEvents reads the dev receiver's kept events.
func (s *devStack) devEvents() []receiver.Event {
	s.t.Helper()
	resp, err := http.Get(s.session.WebhookReceiver.Events)
	if err != nil {
		s.t.Fatalf("GET %s: %v", s.session.WebhookReceiver.Events, err)
	}
	defer resp.Body.Close()
	var page struct {
		Events []receiver.Event `json:"events"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&page); err != nil {
		s.t.Fatalf("decode events: %v", err)
	}
	return page.Events
}

// waitEvent waits until the receiver holds an event that match accepts, and returns it.
func (s *devStack) waitEvent(timeout time.Duration, what string, match func(typ string, data map[string]any) bool) receiver.Event {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		for _, ev := range s.devEvents() {
			var data map[string]any
			if json.Unmarshal(ev.Data, &data) == nil && match(ev.Type, data) {
				return ev
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("no %s event reached the dev receiver in %v; it holds %+v", what, timeout, s.devEvents())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDevEventsAndInboundReply: `switchboard dev` runs a receiver that checks every signature and
// subscribes it; a message's changes arrive as message.status events in sequence order, ending
// with delivered; a reply posted through the mock gateway lands in the inbox as an sms entry and
// arrives as inbox.received; the webhooks commands show the deliveries.
func TestDevEventsAndInboundReply(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	s := startDev(t, dir)
	if s.session.WebhookReceiver == nil || s.session.WebhookReceiver.URL == "" {
		t.Fatalf("session.json lists no webhook receiver: %+v", s.session)
	}
	token := s.token("case-system")
	var accepted map[string]any
	resp, raw := s.do("POST", "/v1/messages", token, "ev-1", smsSubmission(t, dir), &accepted)
	if resp.StatusCode != 202 {
		t.Fatalf("submit: %d %s", resp.StatusCode, raw)
	}
	id := accepted["id"].(string)
	s.waitStatus(token, id, 30*time.Second, "delivered")
	last := s.waitEvent(30*time.Second, "delivered", func(typ string, d map[string]any) bool {
		return typ == "message.status" && d["id"] == id && d["status"] == "delivered"
	})
	var seqs []float64
	for _, ev := range s.devEvents() {
		var d map[string]any
		_ = json.Unmarshal(ev.Data, &d)
		if ev.Type == "message.status" && d["id"] == id {
			seqs = append(seqs, d["sequence"].(float64))
			if to, _ := d["to"].(map[string]any); to["phone"] != "redacted" || strings.Contains(string(ev.Data), "+15550100123") {
				t.Fatalf("an event shows the recipient: %s", ev.Data)
			}
		}
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("sequences out of order: %v", seqs)
		}
	}
	if !strings.HasPrefix(last.ID, "evt_") {
		t.Fatalf("event id %q", last.ID)
	}

	// A reply SMS, as the README's quick start shows it.
	gw := s.session.Gateways["sms-gateway"]
	r, err := http.Post(gw+"/inbound", "application/json", strings.NewReader(`{"from": "+15550100123", "text": "YES"}`))
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusOK {
		t.Fatalf("POST %s/inbound = %d", gw, r.StatusCode)
	}
	var page struct {
		Entries []map[string]any `json:"entries"`
	}
	resp, raw = s.do("GET", "/v1/inbox", s.token("inbox-reader"), "", nil, &page)
	if resp.StatusCode != 200 || len(page.Entries) != 1 {
		t.Fatalf("GET /v1/inbox: %d %s", resp.StatusCode, raw)
	}
	e := page.Entries[0]
	if e["channel"] != "sms" || e["provider"] != "sms-gateway" || e["from"] != "+15550100123" || e["payload"] != "YES" ||
		!strings.HasPrefix(e["messageId"].(string), "gw-in-") {
		t.Fatalf("inbox entry %v", e)
	}
	s.waitEvent(30*time.Second, "inbox.received", func(typ string, d map[string]any) bool {
		return typ == "inbox.received" && d["id"] == e["id"] && d["payload"] == "YES"
	})

	// Bad inbound callbacks, signed as the gateway signs them: refused, never stored, never a 500;
	// a repeat of the first reference answers as the first did and stores nothing.
	secret, err := os.ReadFile(filepath.Join(dir, ".switchboard", "dev", "secrets", "callback-secret"))
	if err != nil {
		t.Fatal(err)
	}
	post := func(provider, body string) (int, string) {
		mac := hmac.New(sha256.New, secret)
		mac.Write([]byte(body))
		req, _ := http.NewRequest("POST", s.session.API+"/v1/provider-callbacks/"+provider, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Signature", hex.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		problem, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(problem)
	}
	for name, tc := range map[string]struct {
		provider, body string
		want           int
		detail         string // what the problem's detail names, when not empty
	}{
		"received before 1970": {"sms-gateway", `{"type":"inbound","id":"gw-in-x0","from":"+1555","text":"hi","receivedAt":"1969-12-31T23:59:59Z"}`, 422, "receivedAt"},
		"missing from":         {"sms-gateway", `{"type":"inbound","id":"gw-in-x1","text":"hi"}`, 422, ""},
		"oversized text":       {"sms-gateway", `{"type":"inbound","id":"gw-in-x2","from":"+1555","text":"` + strings.Repeat("x", 64<<10+1) + `"}`, 422, ""},
		"unknown provider":     {"fax-gateway", `{"type":"inbound","id":"gw-in-x3","from":"+1555","text":"hi"}`, 403, ""},
		"repeat":               {"sms-gateway", `{"type":"inbound","id":"` + e["messageId"].(string) + `","from":"+15550100123","text":"YES"}`, 204, ""},
	} {
		if got, problem := post(tc.provider, tc.body); got != tc.want || !strings.Contains(problem, tc.detail) {
			t.Errorf("%s: answered %d %s, want %d naming %q", name, got, problem, tc.want, tc.detail)
		}
	}
	resp, raw = s.do("GET", "/v1/inbox", s.token("inbox-reader"), "", nil, &page)
	if resp.StatusCode != 200 || len(page.Entries) != 1 {
		t.Fatalf("after the bad and repeated callbacks the inbox holds %s", raw)
	}

	runtimeFile := s.session.Runtime
	out, errOut, code := cli(t, "--config", runtimeFile, "-o", "json", "webhooks", "list")
	if code != 0 {
		t.Fatalf("webhooks list: %d %s", code, errOut)
	}
	var list struct {
		Endpoints []endpointLine `json:"endpoints"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Endpoints) != 1 ||
		list.Endpoints[0].ID != devWebhookEndpoint || list.Endpoints[0].LastSuccess == nil {
		t.Fatalf("webhooks list: %v %s", err, out)
	}
	out, errOut, code = cli(t, "--config", runtimeFile, "-o", "json", "webhooks", "events", "--status", "delivered")
	if code != 0 {
		t.Fatalf("webhooks events: %d %s", code, errOut)
	}
	var events struct {
		Events []eventLine `json:"events"`
	}
	if err := json.Unmarshal([]byte(out), &events); err != nil || len(events.Events) != 2 {
		t.Fatalf("webhooks events --status delivered: %v %s", err, out)
	}
	_, errOut, code = cli(t, "--config", runtimeFile, "webhooks", "events", "--status", "lost")
	if code != 2 {
		t.Fatalf("webhooks events --status lost: exit %d, want 2 (%s)", code, errOut)
	}
	// Redelivery previews first, then makes both pending again; serve sends them with their ids.
	out, _, code = cli(t, "--config", runtimeFile, "-o", "json", "webhooks", "redeliver", "--endpoint", devWebhookEndpoint, "--since", "1h")
	if code != 0 || !strings.Contains(out, `"count":2`) || !strings.Contains(out, `"applied":false`) {
		t.Fatalf("redeliver preview: %d %s", code, out)
	}
	out, _, code = cli(t, "--config", runtimeFile, "-o", "json", "webhooks", "redeliver", "--endpoint", devWebhookEndpoint, "--since", "1h", "--apply")
	if code != 0 || !strings.Contains(out, `"redelivered":2`) {
		t.Fatalf("redeliver: %d %s", code, out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		dups := 0
		for _, ev := range s.devEvents() {
			if ev.Duplicate && (ev.ID == last.ID || ev.Type == "inbox.received") {
				dups++
			}
		}
		if dups >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the redelivered events did not arrive again with their ids: %+v", s.devEvents())
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, _, code = cli(t, "--config", runtimeFile, "webhooks", "redeliver", "--endpoint", "nobody", "--since", "1h")
	if code != 1 {
		t.Fatalf("redeliver to an unknown endpoint: exit %d, want 1", code)
	}
}
