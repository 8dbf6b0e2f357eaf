package main

import (
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

// TestOperatorRetryAndSettleOverAPI drives POST /v1/messages/{id}/retry and …/settle: operators
// only, the message view in answer (checked against the served OpenAPI document), the same
// eligibility rules as the command line, journaled with the operator's pseudonym.
func TestOperatorRetryAndSettleOverAPI(t *testing.T) {
	t.Parallel()
	f := newOpsFixture(t)
	e := f.e
	doc := e.do(request{method: "GET", path: "/openapi.json"})
	o := loadOpenAPI(t, doc.raw)
	for _, p := range []string{`"/v1/messages/{id}/retry"`, `"/v1/messages/{id}/settle"`, `"SettleRequest"`} {
		if !strings.Contains(string(doc.raw), p) {
			t.Fatalf("the OpenAPI document lacks %s", p)
		}
	}
	operator, sender := e.token("operations-console"), e.token("case-system")
	failed := f.inState(1, engine.DispatchFailed)[0]
	unknown := f.inState(2, engine.DispatchUnknown)

	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages/" + failed + "/retry", token: sender}), 403, "operation.not-authorized")
	a := e.do(request{method: "POST", path: "/v1/messages/" + failed + "/retry", token: operator})
	if a.status != 200 {
		t.Fatalf("retry: %d %s", a.status, a.raw)
	}
	o.check(t, "MessageView", a.raw)
	if v := a.json(t); v["status"] != "queued" || v["generation"] != 2.0 {
		t.Fatalf("retry view %s", a.raw)
	}
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages/" + failed + "/retry", token: operator}), 409, "message.not-eligible")
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages/" + failed + "/retry", token: operator, body: map[string]any{"force": true}}), 400, "request.invalid")
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages/0190f5a0-0000-7000-8000-ffffffffffff/retry", token: operator}), 404, "message.not-visible")

	settle := func(id string, body any) answer {
		return e.do(request{method: "POST", path: "/v1/messages/" + id + "/settle", token: operator, body: body})
	}
	assertProblem(t, o, settle(unknown[0], map[string]any{"outcome": "maybe"}), 422, "request.unprocessable")
	assertProblem(t, o, settle(unknown[0], map[string]any{"outcome": "sent", "note": "x"}), 400, "request.invalid")
	assertProblem(t, o, e.do(request{method: "POST", path: "/v1/messages/" + unknown[0] + "/settle", token: operator, body: []byte(`{"outcome":"sent"}`), contentType: "text/plain"}), 415, "request.unsupported-media-type")
	assertProblem(t, o, e.do(request{method: "GET", path: "/v1/messages/" + unknown[0] + "/settle", token: operator}), 405, "request.method-not-allowed")
	for i, want := range []string{"submitted", "queued"} {
		a := settle(unknown[i], map[string]any{"outcome": []string{"sent", "not-sent"}[i]})
		if a.status != 200 {
			t.Fatalf("settle: %d %s", a.status, a.raw)
		}
		o.check(t, "MessageView", a.raw)
		if v := a.json(t); v["status"] != want {
			t.Fatalf("settle %d: %s", i, a.raw)
		}
	}
	assertProblem(t, o, settle(unknown[0], map[string]any{"outcome": "sent"}), 409, "message.not-eligible")

	var actors []string
	if err := f.st.ExportAudit(f.ctx, time.Time{}, func(r store.AuditRecord) error {
		if r.Event == "message.retried" || r.Event == "message.settled" {
			actors = append(actors, r.Actor)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(actors) != 3 || actors[0] == "" || actors[0] == "operator-tool" || strings.Contains(actors[0], "operations-console") ||
		actors[1] != actors[0] || actors[2] != actors[0] {
		t.Fatalf("journal actors %q, want the operator's pseudonym three times", actors)
	}
}
