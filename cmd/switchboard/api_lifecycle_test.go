package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
)

func TestSubmitViewAndIdempotency(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")

	a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "same", body: with(smsBody(nil), "correlationId", "case-7")})
	if a.status != 202 {
		t.Fatalf("submit: %d %s", a.status, a.raw)
	}
	o.check(t, "Accepted", a.raw)
	id := a.json(t)["id"].(string)

	v := e.do(request{method: "GET", path: "/v1/messages/" + id, token: sender})
	o.check(t, "MessageView", v.raw)
	view := v.json(t)
	if view["status"] != "queued" || view["correlationId"] != "case-7" || strings.Contains(string(v.raw), testPhone) {
		t.Fatalf("view %s", v.raw)
	}

	// Formatting does not matter, values do.
	again := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "same",
		body: []byte(" {\"correlationId\":\"case-7\",\n" + string(mustJSON(t, smsBody(nil)))[1:])})
	if again.status != 202 || string(again.raw) != string(a.raw) {
		t.Fatalf("replay: %d %s (first %s)", again.status, again.raw, a.raw)
	}
	reused := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "same", body: with(smsBody(nil), "correlationId", "case-8")})
	assertProblem(t, o, reused, 409, "idempotency.key-reused")

	// Past the receipt window (submissionReceiptDays: 7) the key answers 410, never a new message.
	e.clock.Advance(8 * 24 * time.Hour)
	late := e.do(request{method: "POST", path: "/v1/messages", token: e.token("case-system"), key: "same", body: with(smsBody(nil), "correlationId", "case-7")})
	assertProblem(t, o, late, 410, "idempotency.expired")
}

func TestConcurrentSubmissionsWithOneKeyMakeOneMessage(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	sender := e.token("case-system")
	var wg sync.WaitGroup
	ids := make([]string, 50)
	statuses := make([]int, 50)
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "racing", body: smsBody(nil)})
			statuses[i] = a.status
			if a.status == 202 {
				ids[i] = a.json(t)["id"].(string)
			}
		}()
	}
	wg.Wait()
	for i := range 50 {
		if statuses[i] != 202 || ids[i] != ids[0] {
			t.Fatalf("request %d: status %d id %q, want 202 and %q", i, statuses[i], ids[i], ids[0])
		}
	}
	st, err := e.stack.store.Stats(context.Background(), e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Dispatch[engine.DispatchQueued] != 1 {
		t.Fatalf("%d queued messages, want exactly 1", st.Dispatch[engine.DispatchQueued])
	}
}

func TestCancelAndVisibility(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender, operator, receiver := e.token("case-system"), e.token("operations-console"), e.token("inbox-reader")
	submit := func(key string) string {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: key, body: smsBody(nil)})
		if a.status != 202 {
			t.Fatalf("submit: %d %s", a.status, a.raw)
		}
		return a.json(t)["id"].(string)
	}
	queued := submit("c1")
	assertProblem(t, o, e.do(request{method: "GET", path: "/v1/messages/" + queued, token: receiver}), 404, "message.not-visible")
	if a := e.do(request{method: "GET", path: "/v1/messages/" + queued, token: operator}); a.status != 200 {
		t.Fatalf("operator view: %d", a.status)
	}
	c := e.do(request{method: "POST", path: "/v1/messages/" + queued + "/cancel", token: sender})
	if c.status != 200 || c.json(t)["status"] != "cancelled" {
		t.Fatalf("cancel queued: %d %s", c.status, c.raw)
	}
	o.check(t, "MessageView", c.raw)
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages/" + queued + "/cancel", token: sender}), 409, "message.terminal")

	// A message being sent cannot be cancelled.
	sending := submit("c2")
	page, err := e.stack.store.ClaimPage(context.Background(), e.clock.Now(), engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(page.Claims) != 1 || page.Claims[0].Message.ID != sending {
		t.Fatalf("claim: %v %+v", err, page)
	}
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages/" + sending + "/cancel", token: operator}), 409, "message.dispatch-started")
}

func TestLimits(t *testing.T) {
	t.Parallel()
	manifest := func(s string) string {
		s = strings.Replace(s, "requestsPerMinute: 1200000\n    burst: 20000\n    dailyLimit: 10000000",
			"requestsPerMinute: 60\n    burst: 4\n    dailyLimit: 2", 1)
		return s
	}
	e := newAPIEnv(t, envOptions{edit: map[string]func(string) string{"switchboard.yaml": manifest}})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")
	for i := range 2 {
		if a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: fmt.Sprint("q", i), body: smsBody(nil)}); a.status != 202 {
			t.Fatalf("submit %d: %d %s", i, a.status, a.raw)
		}
	}
	q := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "q2", body: smsBody(nil)})
	assertProblem(t, o, q, 429, "quota.exceeded")
	if q.header.Get("Retry-After") == "" {
		t.Fatal("quota refusal without Retry-After")
	}
	// The bucket held 4; 3 are spent. The 5th request is refused by the rate limit.
	e.do(request{method: "GET", path: "/v1/messages/none", token: sender})
	r := e.do(request{method: "GET", path: "/v1/messages/none", token: sender})
	assertProblem(t, o, r, 429, "rate-limit.exceeded")
	if r.header.Get("Retry-After") == "" {
		t.Fatal("rate refusal without Retry-After")
	}
	// The next day, with the bucket refilled, submissions are accepted again.
	e.clock.Advance(24 * time.Hour)
	if a := e.do(request{method: "POST", path: "/v1/messages", token: e.token("case-system"), key: "q3", body: smsBody(nil)}); a.status != 202 {
		t.Fatalf("next day: %d %s", a.status, a.raw)
	}
}

func TestContentRefusals(t *testing.T) {
	t.Parallel()
	edits := map[string]func(string) string{
		"switchboard.yaml": func(s string) string {
			s = strings.Replace(s, "allowDirectContent: false", "allowDirectContent: true", 1)
			return strings.Replace(s, "maximumSegments: 3", "maximumSegments: 1", 1)
		},
		"templates/appointment-reminder-sms/1/en/text.tmpl": func(s string) string {
			return strings.TrimRight(s, "\n") + "{{if .patientName}} {{.patientName}}{{end}}{{.extra}}\n"
		},
		"templates/appointment-reminder-sms/1/schema.json": func(s string) string {
			return strings.Replace(s, `"patientName":`, `"extra": {"type": "string"}, "patientName":`, 1)
		},
		"templates/appointment-reminder-sms/1/sample.json": func(s string) string {
			return strings.Replace(s, `{"clinicName"`, `{"extra": "", "clinicName"`, 1)
		},
	}
	e := newAPIEnv(t, envOptions{edit: edits})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")
	direct := func(text string) map[string]any {
		return map[string]any{"senderProfile": "reminders-sms", "to": map[string]string{"phone": testPhone}, "content": map[string]string{"text": text}}
	}
	data := map[string]any{"clinicName": "Riverside Clinic", "date": "2026-10-01", "time": "09:30", "extra": ""}
	if a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "ok", body: smsBody(data)}); a.status != 202 {
		t.Fatalf("valid: %d %s", a.status, a.raw)
	}
	noExtra := map[string]any{"clinicName": "Riverside Clinic", "date": "2026-10-01", "time": "09:30"}
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "r", body: smsBody(noExtra)}), 422, "template.render-refused")
	long := map[string]any{"clinicName": "Riverside Clinic", "date": "2026-10-01", "time": "09:30", "extra": strings.Repeat("€", 40)}
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "s", body: smsBody(long)}), 422, "content.too-many-segments")
	if a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "d", body: direct("Your parcel is ready.")}); a.status != 202 {
		t.Fatalf("direct content: %d %s", a.status, a.raw)
	}
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "big", body: direct(strings.Repeat("a", 70<<10))}), 422, "content.too-large")
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "seg", body: direct(strings.Repeat("a", 200))}), 422, "content.too-many-segments")
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "empty", body: direct("  ")}), 422, "content.invalid")
}

func TestPreviewSLOReadyAndStoreDown(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender, operator := e.token("case-system"), e.token("operations-console")
	p := e.do(request{method: "POST", path: "/v1/templates/appointment-reminder/versions/1/preview", token: sender,
		body: map[string]any{"locale": "fr", "data": map[string]any{"patientName": "Ada <b>", "clinicName": "Clinique", "date": "2026-10-01", "time": "09:30"}}})
	if p.status != 200 {
		t.Fatalf("preview: %d %s", p.status, p.raw)
	}
	o.check(t, "Preview", p.raw)
	if html, _ := p.json(t)["parts"].(map[string]any)["html"].(string); strings.Contains(html, "<b>") {
		t.Fatalf("html part not escaped: %s", html)
	}
	sms := e.do(request{method: "POST", path: "/v1/templates/appointment-reminder-sms/versions/1/preview", token: sender,
		body: map[string]any{"locale": "en", "data": map[string]any{"clinicName": "Riverside", "date": "2026-10-01", "time": "09:30"}}})
	o.check(t, "Preview", sms.raw)
	if sms.json(t)["sms"] == nil {
		t.Fatalf("sms preview without segments: %s", sms.raw)
	}
	slo := e.do(request{method: "GET", path: "/v1/slo", token: operator})
	o.check(t, "Slo", slo.raw)
	if slo.status != 200 || !strings.Contains(string(slo.raw), `"oversizedSkipsTotal"`) || !strings.Contains(string(slo.raw), `"queued"`) {
		t.Fatalf("slo: %d %s", slo.status, slo.raw)
	}
	r := e.do(request{method: "GET", path: "/ready"})
	o.check(t, "Ready", r.raw)
	if err := e.stack.store.Close(); err != nil {
		t.Fatal(err)
	}
	assertProblem(t, o, e.do(request{method: "GET", path: "/ready"}), 503, "service.unavailable")
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "down", body: smsBody(nil)}), 503, "service.unavailable")
	if h := e.do(request{method: "GET", path: "/health"}); h.status != 200 {
		t.Fatalf("health while the store is down: %d", h.status)
	}
}
