package main

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

const testChatAddress = "C0CHAT42XYZ"

func chatBody(address string) map[string]any {
	return map[string]any{
		"senderProfile": "team-chat", "to": map[string]string{"address": address},
		"template": map[string]string{"id": "case-chat", "version": "1"},
		"locale":   "en", "data": map[string]any{"caseId": "CASE-7", "status": "closed", "note": "Filed"},
	}
}

// TestChatEndToEnd submits a chat message from a template, lets the dispatcher hand it to the
// mock's Slack-like endpoint through the quickstart adapter, and checks the view, the metrics
// and retention: the address is never shown and is erased with the payload.
func TestChatEndToEnd(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{dispatch: true})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")
	a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "chat-1", body: chatBody(testChatAddress)})
	if a.status != 202 {
		t.Fatalf("submit: %d %s", a.status, a.raw)
	}
	id := a.json(t)["id"].(string)
	var view map[string]any
	var raw []byte
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		v := e.do(request{method: "GET", path: "/v1/messages/" + id, token: sender})
		if view, raw = v.json(t), v.raw; view["status"] == "submitted" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	o.check(t, "MessageView", raw)
	to, _ := view["to"].(map[string]any)
	if view["status"] != "submitted" || view["report"] != "unavailable" || view["channel"] != "chat" ||
		len(to) != 1 || to["address"] != "redacted" || strings.Contains(string(raw), testChatAddress) {
		t.Fatalf("view %s", raw)
	}
	got := e.gw.ChatHistory(testChatAddress)
	if len(got) != 1 || got[0].Text != "Case CASE-7 closed: Filed" || got[0].Username != "Switchboard" ||
		!strings.Contains(string(got[0].Blocks), `"*Case CASE-7* is closed"`) {
		t.Fatalf("the gateway received %+v", got)
	}

	srv := httptest.NewServer(e.stack.metrics.handler(e.stack))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `switchboard_provider_attempts_total{outcome="accepted",provider="chat-gateway"} 1`) ||
		strings.Contains(string(metrics), testChatAddress) {
		t.Fatalf("metrics: attempt not counted, or the address shows")
	}

	e.clock.Advance(8 * 24 * time.Hour)
	ret, err := engine.NewRetention(engine.RetentionConfig{Store: e.stack.store, Clock: e.clock,
		Policy: engine.RetentionPolicy{PayloadDays: 7, RecordDays: 90, SubmissionReceiptDays: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ret.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	m, err := e.stack.store.Message(context.Background(), id)
	if err != nil || m.PayloadErasedAt == nil || m.RecipientKind != "address" {
		t.Fatalf("after retention: %+v, %v", m, err)
	}
}

// TestChatRefusals checks the address rule (1-256 printable characters, refused as
// request.invalid without echoing it), the recipient kind, and direct chat content ({text}).
func TestChatRefusals(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{edit: map[string]func(string) string{
		"switchboard.yaml": func(s string) string {
			return strings.Replace(s, "allowDirectContent: false", "allowDirectContent: true", 1)
		},
	}})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")
	for name, address := range map[string]string{
		"too long":     strings.Repeat("Riverside", 29),
		"a line break": "Riverside\nC01",
		"a tab":        "Riverside\tC01",
		"a control":    "Riverside\x00",
	} {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "bad-" + name, body: chatBody(address)})
		assertProblem(t, o, a, 400, "request.invalid")
	}
	long := strings.Repeat("é", 256) // 256 characters, 512 bytes: allowed
	if a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "long", body: chatBody(long)}); a.status != 202 {
		t.Fatalf("256 characters: %d %s", a.status, a.raw)
	}
	if a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "spaces", body: chatBody("#ops room")}); a.status != 202 {
		t.Fatalf("an address with a space: %d %s", a.status, a.raw)
	}
	wrongKind := with(chatBody(""), "to", map[string]string{"phone": testPhone})
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "kind", body: wrongKind}), 422, "content.invalid")
	smsToAddress := with(smsBody(nil), "to", map[string]string{"address": testChatAddress})
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "kind2", body: smsToAddress}), 422, "content.invalid")

	direct := func(content map[string]string) map[string]any {
		return map[string]any{"senderProfile": "team-chat", "to": map[string]string{"address": testChatAddress}, "content": content}
	}
	a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "direct", body: direct(map[string]string{"text": "Deploy done"})})
	if a.status != 202 {
		t.Fatalf("direct chat content: %d %s", a.status, a.raw)
	}
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "subj",
		body: direct(map[string]string{"text": "x", "subject": "y"})}), 422, "content.invalid")
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "big",
		body: direct(map[string]string{"text": strings.Repeat("a", 65<<10)})}), 422, "content.too-large")
}
