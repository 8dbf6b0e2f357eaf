package main

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine/webhooks/receiver"
)

// TestReasonReachesTheApp: the code an adapter's receipt() gives a message it reports
// undelivered reaches the application, in the view of GET /v1/messages/{id} (as the OpenAPI
// document describes it) and in its message.status event; a cancel says who cancelled.
func TestReasonReachesTheApp(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []receiver.Event
	front := httptest.NewServer(nil)
	t.Cleanup(front.Close)
	e := newAPIEnv(t, envOptions{dispatch: true, noReports: true, webhookURL: front.URL + "/",
		edit: map[string]func(string) string{"providers/sms-gateway/adapter.js": func(s string) string {
			// The quickstart's adapter, giving the gateway's reason for an undelivered report.
			return strings.Replace(s, `return {providerReference: r.id, report: r.status};`,
				`return {providerReference: r.id, report: r.status, code: typeof r.reason === "string" ? "pigeonpost." + r.reason : undefined};`, 1)
		}}})
	front.Config.Handler = receiver.New(receiver.Options{Key: e.webhookKey(), KeepData: true, OnEvent: func(ev receiver.Event) {
		mu.Lock()
		events = append(events, ev)
		mu.Unlock()
	}})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender, operator := e.token("case-system"), e.token("operations-console")

	view := func(id string) map[string]any {
		t.Helper()
		a := e.do(request{method: "GET", path: "/v1/messages/" + id, token: sender})
		if a.status != 200 {
			t.Fatalf("GET %s: %d %s", id, a.status, a.raw)
		}
		o.check(t, "MessageView", a.raw)
		return a.json(t)
	}
	waitView := func(id, status string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			v := view(id)
			if v["status"] == status {
				return v
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s is %v after 30 s, want %s", id, v["status"], status)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	wantReason := func(what string, v map[string]any, code, by string) {
		t.Helper()
		r, _ := v["reason"].(map[string]any)
		if code == "" {
			if v["reason"] != nil {
				t.Fatalf("%s: reason %v, want none", what, v["reason"])
			}
			return
		}
		if len(r) != 2 || r["code"] != code || r["by"] != by {
			t.Fatalf("%s: reason %v, want {%s %s}", what, v["reason"], code, by)
		}
	}

	a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "reason-1", body: smsBody(nil)})
	if a.status != 202 {
		t.Fatalf("submit: %d %s", a.status, a.raw)
	}
	id := a.json(t)["id"].(string)
	wantReason("submitted", waitView(id, "submitted"), "", "")
	m, err := e.stack.store.Message(context.Background(), id)
	if err != nil || m.ProviderRef == "" {
		t.Fatalf("the gateway's reference of %s: %q, %v", id, m.ProviderRef, err)
	}
	report := []byte(`{"id":"` + m.ProviderRef + `","status":"undelivered","reason":"handset-off"}`)
	if a := e.do(request{method: "POST", path: "/v1/provider-callbacks/sms-gateway", body: report,
		header: map[string]string{"x-signature": e.sign(report)}}); a.status != 204 {
		t.Fatalf("the gateway's report: %d %s", a.status, a.raw)
	}
	v := view(id)
	if v["status"] != "failed" || v["report"] != "undelivered" {
		t.Fatalf("after the report: %v / %v", v["status"], v["report"])
	}
	wantReason("reported undelivered", v, "pigeonpost.handset-off", "provider")

	// The event of the change carries the same view.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got map[string]any
		mu.Lock()
		for _, ev := range events {
			var d map[string]any
			if ev.Type == "message.status" && json.Unmarshal(ev.Data, &d) == nil && d["id"] == id && d["status"] == "failed" {
				got = d
			}
		}
		mu.Unlock()
		if got != nil {
			wantReason("the message.status event", got, "pigeonpost.handset-off", "provider")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no message.status event of the failed message in 30 s")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Cancels: by the submitter, Switchboard did it at its request; by an operator, the operator.
	later := with(smsBody(nil), "notBefore", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	for _, c := range []struct{ key, token, by string }{{"reason-2", sender, "switchboard"}, {"reason-3", operator, "operator"}} {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: c.key, body: later})
		if a.status != 202 {
			t.Fatalf("submit: %d %s", a.status, a.raw)
		}
		id := a.json(t)["id"].(string)
		wantReason("queued", view(id), "", "")
		cancelled := e.do(request{method: "POST", path: "/v1/messages/" + id + "/cancel", token: c.token})
		if cancelled.status != 200 {
			t.Fatalf("cancel: %d %s", cancelled.status, cancelled.raw)
		}
		o.check(t, "MessageView", cancelled.raw)
		wantReason("the cancel's answer", cancelled.json(t), "message.cancelled", c.by)
		wantReason("cancelled", view(id), "message.cancelled", c.by)
	}
}
