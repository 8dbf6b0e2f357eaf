package main

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/webhooks/receiver"
	"switchboard/packages"
	"switchboard/providers/httpgw/mockpush"
)

// startPushMocks starts the mock push gateway dev gives each of the quickstart's push providers.
func startPushMocks(t testing.TB, pkg *packages.Package, l devPaths) *devHTTP {
	t.Helper()
	h := &devHTTP{providers: map[string]devProvider{}, entries: map[string]map[string]any{}}
	t.Cleanup(h.close)
	for _, id := range []string{"fcm", "apns"} {
		p := pkg.Provider(id)
		protocol := pushMockFor(filepath.Join(pkg.Root, "providers", id))
		if p == nil || protocol == "" {
			t.Fatalf("the quickstart has no push provider %s (mock %q)", id, protocol)
		}
		if err := h.addPush(p, protocol, l, slog.New(slog.DiscardHandler)); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

func pushBody(profile, device string) map[string]any {
	return map[string]any{
		"senderProfile": profile, "to": map[string]string{"device": device},
		"template": map[string]string{"id": "case-push", "version": "1"},
		"locale":   "en", "data": map[string]any{"caseId": "CASE-7", "status": "closed"},
	}
}

// TestPushEndToEnd submits push messages from the quickstart's template through FCM and APNs
// (the dev stack's mocks, over HTTP/2 and TLS with the real credential kinds): each ends
// submitted, the token never shows; a dead token fails the message and the application gets a
// signed device.unregistered event without the token.
func TestPushEndToEnd(t *testing.T) {
	t.Parallel()
	events := make(chan receiver.Event, 64)
	front := httptest.NewServer(nil)
	t.Cleanup(front.Close)
	e := newAPIEnv(t, envOptions{dispatch: true, pushMocks: true, webhookURL: front.URL + "/"})
	front.Config.Handler = receiver.New(receiver.Options{Key: e.webhookKey(), OnEvent: func(ev receiver.Event) { events <- ev }})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")

	wait := func(id, want string) map[string]any {
		t.Helper()
		var view map[string]any
		var raw []byte
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			v := e.do(request{method: "GET", path: "/v1/messages/" + id, token: sender})
			if view, raw = v.json(t), v.raw; view["status"] == want {
				break
			}
		}
		o.check(t, "MessageView", raw)
		if view["status"] != want {
			t.Fatalf("message %s: %s, want %s", id, raw, want)
		}
		return view
	}
	const token = "fcm-token:APA91bHun4MxP5egoKMwt2KZFBaFUH"
	for i, profile := range []string{"app-push", "app-push-ios"} {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "push-" + profile, body: pushBody(profile, token)})
		if a.status != 202 {
			t.Fatalf("submit %s: %d %s", profile, a.status, a.raw)
		}
		view := wait(a.json(t)["id"].(string), "submitted")
		to, _ := view["to"].(map[string]any)
		if view["channel"] != "push" || to["device"] != "redacted" || len(to) != 1 {
			t.Fatalf("view %d: %v", i, view)
		}
	}

	a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "push-dead",
		body: pushBody("app-push", mockpush.DeadPrefix+"-token-1")})
	if a.status != 202 {
		t.Fatalf("submit: %d %s", a.status, a.raw)
	}
	id := a.json(t)["id"].(string)
	view := wait(id, "failed")
	if r, _ := view["reason"].(map[string]any); r["code"] != "fcm.unregistered" || r["by"] != "provider" {
		t.Fatalf("reason %v", view["reason"])
	}
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Type != engine.EventDeviceUnregistered {
				continue
			}
			var data map[string]any
			if err := json.Unmarshal(ev.Data, &data); err != nil {
				t.Fatal(err)
			}
			if data["messageId"] != id || data["provider"] != "fcm" || data["at"] == nil || len(data) != 3 ||
				strings.Contains(string(ev.Data), "dead-token") {
				t.Fatalf("device.unregistered data %s", ev.Data)
			}
			return
		case <-deadline:
			t.Fatal("no device.unregistered event reached the endpoint")
		}
	}
}

// TestPushBadInputProblems: a device token with a control character, content.data that is not
// an object, data whose values are not strings, data over 4 KiB and a template whose data does
// not render to an object of strings are refused, each with a stable problem code whose detail
// names the member, never a 500 and never the value.
func TestPushBadInputProblems(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{edit: map[string]func(string) string{
		"switchboard.yaml": func(s string) string {
			return strings.Replace(s, "    allowDirectContent: false\n", "    allowDirectContent: true\n", 1)
		},
		// A note is printed as JSON as it is: a number makes a data member that is not a string.
		"templates/case-push/1/en/data.tmpl": func(string) string { return `{"caseId": {{json .caseId}}{{with .note}}, "note": {{.}}{{end}}}` },
		"templates/case-push/1/sample.json":  func(string) string { return `{"caseId": "CASE-1", "status": "closed"}` },
	}})
	sender := e.token("case-system")
	direct := func(device string, data any) map[string]any {
		return map[string]any{"senderProfile": "app-push", "to": map[string]string{"device": device},
			"content": map[string]any{"title": "Case closed", "body": "Your case is closed.", "data": data}}
	}
	for i, tc := range []struct {
		name         string
		body         any
		status       int
		code, member string
	}{
		{"control character in the token", direct("secret-tok\x07en", map[string]string{"a": "b"}), 400, "request.invalid", "to.device"},
		{"a line break in the token", direct("secret-tok\nen", nil), 400, "request.invalid", "to.device"},
		{"data not an object", direct("secret-token-1", "caseId=CASE-7"), 400, "request.invalid", "content.data"},
		{"data values not strings", direct("secret-token-1", map[string]any{"count": 3}), 422, "content.invalid", "content.data"},
		{"data over 4 KiB", direct("secret-token-1", map[string]string{"pad": strings.Repeat("x", 4100)}), 422, "content.too-large", "content.data"},
		{"template data not strings", map[string]any{"senderProfile": "app-push", "to": map[string]string{"device": "secret-token-1"},
			"template": map[string]string{"id": "case-push", "version": "1"}, "locale": "en",
			"data": map[string]any{"caseId": "CASE-7", "status": "closed", "note": "3"}}, 422, "template.render-refused", "data part"},
	} {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "bad-" + string(rune('a'+i)), body: tc.body})
		p := a.json(t)
		if a.status != tc.status || p["code"] != tc.code || !strings.Contains(p["detail"].(string), tc.member) ||
			strings.Contains(string(a.raw), "secret-tok") || a.header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("%s: %d %s, want %d %s naming %s", tc.name, a.status, a.raw, tc.status, tc.code, tc.member)
		}
	}
}
