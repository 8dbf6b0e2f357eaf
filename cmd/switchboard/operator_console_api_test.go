package main

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// operatorAPI is the fixture of the operator API tests: the stack, the served OpenAPI document
// and tokens of each role.
type operatorAPI struct {
	*opsFixture
	o                          *openAPI
	operator, sender, receiver string
}

func newOperatorAPI(t *testing.T) *operatorAPI {
	t.Helper()
	f := newOpsFixture(t)
	doc := f.e.do(request{method: "GET", path: "/openapi.json"})
	return &operatorAPI{opsFixture: f, o: loadOpenAPI(t, doc.raw), operator: f.e.token("operations-console"),
		sender: f.e.token("case-system"), receiver: f.e.token("inbox-reader")}
}

func (a *operatorAPI) get(path, token string) answer {
	return a.e.do(request{method: "GET", path: path, token: token})
}

// TestListMessagesOverAPI pages newest first with filters, checks each answer against the
// OpenAPI document, shows a sender only its own messages, and refuses bad parameters and
// callers without a valid token.
func TestListMessagesOverAPI(t *testing.T) {
	t.Parallel()
	a := newOperatorAPI(t)
	failed := a.inState(3, engine.DispatchFailed) // first: inState claims whatever is due
	a.e.clock.Advance(time.Second)
	queued := a.inState(12, engine.DispatchQueued)

	var got []string
	path := "/v1/messages?limit=5"
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("the listing does not end")
		}
		ans := a.get(path, a.operator)
		if ans.status != 200 {
			t.Fatalf("list: %d %s", ans.status, ans.raw)
		}
		a.o.check(t, "MessageList", ans.raw)
		v := ans.json(t)
		for _, m := range v["messages"].([]any) {
			got = append(got, m.(map[string]any)["id"].(string))
		}
		next, _ := v["next"].(string)
		if next == "" {
			break
		}
		path = "/v1/messages?limit=5&after=" + url.QueryEscape(next)
	}
	if len(got) != 15 || got[0] != queued[11] || got[11] != queued[0] || got[12] != failed[2] || got[14] != failed[0] {
		t.Fatalf("newest first: %v", got)
	}
	ans := a.get("/v1/messages?status=failed&senderProfile=reminders-sms&channel=sms", a.operator)
	a.o.check(t, "MessageList", ans.raw)
	list := ans.json(t)["messages"].([]any)
	if len(list) != 3 || len(list[0].(map[string]any)["attempts"].([]any)) != 1 {
		t.Fatalf("failed filter: %s", ans.raw)
	}
	if strings.Contains(string(ans.raw), testPhone) || strings.Contains(string(ans.raw), "Riverside") {
		t.Fatal("a listing shows a recipient or content")
	}
	cut := url.QueryEscape(a.message(queued[0]).AcceptedAt.Format(time.RFC3339Nano))
	if n := len(a.get("/v1/messages?acceptedBefore="+cut, a.operator).json(t)["messages"].([]any)); n != 3 {
		t.Fatalf("acceptedBefore lists %d, want the 3 failed", n)
	}
	if n := len(a.get("/v1/messages?acceptedAfter="+cut, a.operator).json(t)["messages"].([]any)); n != 12 {
		t.Fatalf("acceptedAfter lists %d, want the 12 queued", n)
	}

	// A sender sees only what it submitted.
	sub := a.e.do(request{method: "POST", path: "/v1/messages", token: a.sender, key: "list-own-1",
		body: map[string]any{"senderProfile": "reminders-sms", "to": map[string]string{"phone": testPhone},
			"template": map[string]string{"id": "appointment-reminder-sms", "version": "1"}, "locale": "en",
			"data": map[string]string{"clinicName": "Riverside Clinic", "date": "2026-12-01", "time": "09:30"}}})
	if sub.status != 202 {
		t.Fatalf("submit: %d %s", sub.status, sub.raw)
	}
	own := a.get("/v1/messages", a.sender)
	a.o.check(t, "MessageList", own.raw)
	if l := own.json(t)["messages"].([]any); len(l) != 1 || l[0].(map[string]any)["id"] != sub.json(t)["id"] {
		t.Fatalf("the sender lists %s", own.raw)
	}

	for _, bad := range []string{"?status=lost", "?limit=0", "?limit=501", "?limit=x", "?after=not-a-cursor",
		"?acceptedBefore=yesterday", "?channel=fax", "?order=oldest", "?status=queued&status=failed", "?status="} {
		assertProblem(t, a.o, a.get("/v1/messages"+bad, a.operator), 400, "request.invalid")
	}
	assertProblem(t, a.o, a.get("/v1/messages", a.receiver), 403, "operation.not-authorized")
	none := a.get("/v1/messages", "")
	assertProblem(t, a.o, none, 401, "authentication.refused")
	if none.header.Get("WWW-Authenticate") == "" {
		t.Fatal("a 401 without WWW-Authenticate")
	}
	expired, err := a.e.issuer.Mint("operations-console", []string{"messaging:operate"}, time.Minute, a.e.clock.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	assertProblem(t, a.o, a.get("/v1/messages", expired), 401, "authentication.refused")
}

// TestMessageJournalOverAPI reads a message's journal oldest first, for operators only.
func TestMessageJournalOverAPI(t *testing.T) {
	t.Parallel()
	a := newOperatorAPI(t)
	id := a.inState(1, engine.DispatchFailed)[0]
	if r := a.e.do(request{method: "POST", path: "/v1/messages/" + id + "/retry", token: a.operator}); r.status != 200 {
		t.Fatalf("retry: %d %s", r.status, r.raw)
	}
	ans := a.get("/v1/messages/"+id+"/audit", a.operator)
	if ans.status != 200 {
		t.Fatalf("audit: %d %s", ans.status, ans.raw)
	}
	a.o.check(t, "MessageJournal", ans.raw)
	var events []string
	for _, r := range ans.json(t)["records"].([]any) {
		events = append(events, r.(map[string]any)["event"].(string))
	}
	if strings.Join(events, ",") != "message.accepted,attempt.finished,message.retried" {
		t.Fatalf("journal events %v", events)
	}
	assertProblem(t, a.o, a.get("/v1/messages/"+id+"/audit", a.sender), 403, "operation.not-authorized")
	assertProblem(t, a.o, a.get("/v1/messages/0190f5a0-0000-7000-8000-ffffffffffff/audit", a.operator), 404, "message.not-visible")
}

// awaitOperation polls GET /v1/operations/{id} until the operation is final.
func (a *operatorAPI) awaitOperation(t *testing.T, self string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		ans := a.get(self, a.operator)
		if ans.status != 200 {
			t.Fatalf("operation: %d %s", ans.status, ans.raw)
		}
		a.o.check(t, "Operation", ans.raw)
		if v := ans.json(t); v["state"] != "running" {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("operation %s still runs", self)
	return nil
}

// TestOperationsOverAPI previews a bulk retry (count and sample, nothing changed), applies it
// and follows it to done, each change journaled with the operator; bad requests and other
// roles are refused.
func TestOperationsOverAPI(t *testing.T) {
	t.Parallel()
	a := newOperatorAPI(t)
	ids := a.inState(1100, engine.DispatchFailed)
	held := a.inState(2, engine.DispatchUnknown)
	before := a.journal()
	cut := a.e.clock.Now().Add(time.Second).Format(time.RFC3339)
	body := func(apply bool) map[string]any {
		return map[string]any{"action": "retry", "filter": map[string]any{"status": "failed", "acceptedBefore": cut}, "apply": apply}
	}
	prev := a.e.do(request{method: "POST", path: "/v1/operations", token: a.operator, body: body(false)})
	if prev.status != 200 {
		t.Fatalf("preview: %d %s", prev.status, prev.raw)
	}
	a.o.check(t, "OperationPreview", prev.raw)
	if v := prev.json(t); v["count"] != 1100.0 || len(v["sample"].([]any)) != 20 {
		t.Fatalf("preview %s", prev.raw)
	}
	if a.journal() != before || a.message(ids[0]).Dispatch != engine.DispatchFailed {
		t.Fatal("a preview changed something")
	}
	start := a.e.do(request{method: "POST", path: "/v1/operations", token: a.operator, body: body(true)})
	if start.status != 202 || !strings.HasPrefix(start.header.Get("Location"), "/v1/operations/") {
		t.Fatalf("apply: %d %s %s", start.status, start.header, start.raw)
	}
	a.o.check(t, "OperationStarted", start.raw)
	op := a.awaitOperation(t, start.header.Get("Location"))
	if op["state"] != "done" || op["total"] != 1100.0 || op["done"] != 1100.0 || op["failed"] != 0.0 || op["action"] != "retry" {
		t.Fatalf("operation ended %v", op)
	}
	if n := a.count(engine.MessageQuery{Status: "failed"}); n != 0 {
		t.Fatalf("%d messages still failed", n)
	}
	if got := a.journal(); got != before+1101 {
		t.Fatalf("journal grew by %d, want 1101 (one start, 1100 retries)", got-before)
	}

	settle := map[string]any{"action": "settle", "outcome": "not-sent", "filter": map[string]any{"status": "unknown", "acceptedBefore": cut}, "apply": true}
	s := a.e.do(request{method: "POST", path: "/v1/operations", token: a.operator, body: settle})
	if s.status != 202 {
		t.Fatalf("settle: %d %s", s.status, s.raw)
	}
	if op := a.awaitOperation(t, s.json(t)["links"].(map[string]any)["self"].(string)); op["outcome"] != "not-sent" || op["done"] != 2.0 {
		t.Fatalf("settle operation %v", op)
	}
	if m := a.message(held[0]); m.Dispatch != engine.DispatchQueued || m.Generation != 2 {
		t.Fatalf("settled message %s generation %d", m.Dispatch, m.Generation)
	}

	for _, c := range []struct {
		body   any
		status int
		code   string
	}{
		{map[string]any{"action": "settle", "filter": map[string]any{"status": "unknown", "acceptedBefore": cut}}, 422, "request.unprocessable"},
		{map[string]any{"action": "retry", "outcome": "sent", "filter": map[string]any{"status": "failed", "acceptedBefore": cut}}, 422, "request.unprocessable"},
		{map[string]any{"action": "resend", "filter": map[string]any{"status": "failed", "acceptedBefore": cut}}, 422, "request.unprocessable"},
		{map[string]any{"action": "retry", "filter": map[string]any{"status": "queued", "acceptedBefore": cut}}, 409, "message.not-eligible"},
		{map[string]any{"action": "retry", "filter": map[string]any{"status": "failed"}}, 400, "request.invalid"},
		{map[string]any{"action": "retry", "filter": map[string]any{"status": "failed", "acceptedBefore": "soon"}}, 400, "request.invalid"},
		{map[string]any{"action": "retry", "filter": map[string]any{"status": "failed", "acceptedBefore": cut}, "force": true}, 400, "request.invalid"},
	} {
		assertProblem(t, a.o, a.e.do(request{method: "POST", path: "/v1/operations", token: a.operator, body: c.body}), c.status, c.code)
	}
	assertProblem(t, a.o, a.e.do(request{method: "POST", path: "/v1/operations", token: a.operator, body: []byte(`{}`), contentType: "text/plain"}), 415, "request.unsupported-media-type")
	assertProblem(t, a.o, a.e.do(request{method: "POST", path: "/v1/operations", token: a.sender, body: body(false)}), 403, "operation.not-authorized")
	assertProblem(t, a.o, a.get(start.header.Get("Location"), a.sender), 403, "operation.not-authorized")
	assertProblem(t, a.o, a.get("/v1/operations/0190f5a0-0000-7000-8000-ffffffffffff", a.operator), 404, "request.not-found")
	assertProblem(t, a.o, a.get("/v1/operations", a.operator), 405, "request.method-not-allowed")
}

// TestFiguresAndJournalVerificationOverAPI reads the rate figures and verifies the journal in
// the background.
func TestFiguresAndJournalVerificationOverAPI(t *testing.T) {
	t.Parallel()
	a := newOperatorAPI(t)
	a.inState(4, engine.DispatchQueued)
	fig := a.get("/v1/figures", a.operator)
	if fig.status != 200 {
		t.Fatalf("figures: %d %s", fig.status, fig.raw)
	}
	a.o.check(t, "Figures", fig.raw)
	attempts := fig.json(t)["attempts"].(map[string]any)
	for _, p := range []string{"sms-gateway", "mail-relay", "peers"} {
		if _, ok := attempts[p]; !ok {
			t.Fatalf("figures lack provider %s: %s", p, fig.raw)
		}
	}
	assertProblem(t, a.o, a.get("/v1/figures", a.sender), 403, "operation.not-authorized")

	first := a.get("/v1/audit/verification", a.operator)
	a.o.check(t, "JournalVerification", first.raw)
	if first.json(t)["state"] != "none" {
		t.Fatalf("verification before any run: %s", first.raw)
	}
	started := a.e.do(request{method: "POST", path: "/v1/audit/verification", token: a.operator})
	if started.status != 202 {
		t.Fatalf("start verification: %d %s", started.status, started.raw)
	}
	a.o.check(t, "JournalVerification", started.raw)
	deadline := time.Now().Add(30 * time.Second)
	var v map[string]any
	for time.Now().Before(deadline) {
		ans := a.get("/v1/audit/verification", a.operator)
		a.o.check(t, "JournalVerification", ans.raw)
		if v = ans.json(t); v["state"] != "running" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if v["state"] != "done" || v["intact"] != true || v["records"] != 4.0 {
		t.Fatalf("verification ended %v", v)
	}
	assertProblem(t, a.o, a.e.do(request{method: "POST", path: "/v1/audit/verification", token: a.sender}), 403, "operation.not-authorized")
}

// TestConsoleFilesAndCrossSite serves the console with its security headers and refuses a
// state-changing request that a browser sent from another site.
func TestConsoleFilesAndCrossSite(t *testing.T) {
	t.Parallel()
	a := newOperatorAPI(t)
	page := a.get("/console/", "")
	h := page.header
	if page.status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/html") ||
		!strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'self'") ||
		!strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
		h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("console page %d %v", page.status, h)
	}
	if strings.Contains(string(page.raw), "<script>") || strings.Contains(string(page.raw), "style=") || strings.Contains(string(page.raw), "http") {
		t.Fatal("the console page has an inline script or style, or names another origin")
	}
	if cb := a.get("/console/callback?code=x&state=y", ""); cb.status != 200 || string(cb.raw) != string(page.raw) {
		t.Fatalf("callback page %d", cb.status)
	}
	cfg := a.get("/console/config.json", "").json(t)
	if cfg["clientId"] != "operations-console" || cfg["issuer"] != devIssuer || cfg["scope"] != "messaging:operate" {
		t.Fatalf("console config %v", cfg)
	}
	if js := a.get("/console/app.js", ""); js.status != 200 || !strings.HasPrefix(js.header.Get("Content-Type"), "text/javascript") {
		t.Fatalf("app.js %d %v", js.status, js.header)
	}
	assertProblem(t, a.o, a.get("/console/secret.txt", ""), 404, "request.not-found")
	assertProblem(t, a.o, a.get("/console/sub/app.js", ""), 404, "request.not-found")

	id := a.inState(1, engine.DispatchFailed)[0]
	retry := func(origin, fetchSite string) answer {
		hdr := map[string]string{}
		if origin != "" {
			hdr["Origin"] = origin
		}
		if fetchSite != "" {
			hdr["Sec-Fetch-Site"] = fetchSite
		}
		return a.e.do(request{method: "POST", path: "/v1/messages/" + id + "/retry", token: a.operator, header: hdr})
	}
	assertProblem(t, a.o, retry("https://evil.example", ""), 403, "operation.not-authorized")
	assertProblem(t, a.o, retry("null", ""), 403, "operation.not-authorized")
	assertProblem(t, a.o, retry("", "cross-site"), 403, "operation.not-authorized")
	if a.message(id).Dispatch != engine.DispatchFailed {
		t.Fatal("a cross-site request changed the message")
	}
	self := strings.TrimPrefix(a.e.srv.URL, "http://")
	if r := retry(fmt.Sprintf("http://%s", self), "same-origin"); r.status != 200 {
		t.Fatalf("a same-origin retry: %d %s", r.status, r.raw)
	}
}
