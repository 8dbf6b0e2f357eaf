package runtime

import (
	"testing"
	"time"
)

// TestWebhooks: an endpoint decodes with its defaults, and every bad member is refused with its
// own diagnostic.
func TestWebhooks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, doc(map[string]string{"sandbox": `webhooks:
  case-events:
    url: "https://app.example/switchboard-events"
    secretRef: "secret:file/webhook"
    accessProfiles: [case-notices]
  local:
    url: "http://127.0.0.1:9000/events"
    secretRef: "secret:file/webhook"
    accessProfiles: [case-notices, inbox-readers]
    events: [inbox.received]
    timeoutMilliseconds: 1000
    concurrency: 2
retention: {eventDays: 3}`}))
	if len(rt.Webhooks) != 2 {
		t.Fatalf("webhooks = %+v", rt.Webhooks)
	}
	w := rt.Webhooks[0]
	if w.ID != "case-events" || w.URL.String() != "https://app.example/switchboard-events" || len(w.Key) == 0 ||
		w.Events != nil || w.Timeout != 5*time.Second || w.Concurrency != 16 || len(w.AccessProfiles) != 1 {
		t.Fatalf("first endpoint = %+v", w)
	}
	if l := rt.Webhooks[1]; l.Timeout != time.Second || l.Concurrency != 2 || len(l.Events) != 1 || l.Events[0] != "inbox.received" {
		t.Fatalf("second endpoint = %+v", l)
	}
	if rt.Retention.EventDays != 3 {
		t.Fatalf("eventDays = %d", rt.Retention.EventDays)
	}
	if def := b.mustLoad(t, doc(nil)); def.Retention.EventDays != 7 || def.Webhooks != nil {
		t.Fatalf("defaults: eventDays %d, webhooks %+v", def.Retention.EventDays, def.Webhooks)
	}
	b.secret(t, "not-whsec", "plain-secret-value", 0o600)
	for _, tc := range []struct{ name, body, member string }{
		{"plain http to a remote host", `url: "http://app.example/e"`, "webhooks.ep.url"},
		{"user information", `url: "https://u:p@app.example/e"`, "webhooks.ep.url"},
		{"secret not in whsec_ form", `secretRef: "secret:file/not-whsec"`, "webhooks.ep.secretRef"},
		{"missing secret", `secretRef: ""`, "webhooks.ep.secretRef"},
		{"unknown event type", `events: [message.sent]`, "webhooks.ep.events"},
		{"empty event list", `events: []`, "webhooks.ep.events"},
		{"timeout below 1 s", `timeoutMilliseconds: 999`, "webhooks.ep.timeoutMilliseconds"},
		{"timeout above 30 s", `timeoutMilliseconds: 30001`, "webhooks.ep.timeoutMilliseconds"},
		{"no access profile", `accessProfiles: []`, "webhooks.ep.accessProfiles"},
		{"unknown member", `retries: 3`, "webhooks.ep.retries"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines := map[string]string{
				"url":            `url: "https://app.example/e"`,
				"secretRef":      `secretRef: "secret:file/webhook"`,
				"accessProfiles": `accessProfiles: [case-notices]`,
			}
			key := tc.body[:len(tc.body)-len(tc.body[indexColon(tc.body):])]
			lines[key] = tc.body
			text := "webhooks:\n  ep:\n"
			for _, k := range []string{"url", "secretRef", "accessProfiles"} {
				text += "    " + lines[k] + "\n"
				delete(lines, k)
			}
			for _, v := range lines {
				text += "    " + v + "\n"
			}
			_, err := b.load(t, doc(map[string]string{"sandbox": text}))
			requireDiag(t, err, CodeInvalid, tc.member)
		})
	}
	_, err := b.load(t, doc(map[string]string{"sandbox": "webhooks:\n  Bad_Id: {url: \"https://a.example/\", secretRef: \"secret:file/webhook\", accessProfiles: [x]}"}))
	requireDiag(t, err, CodeInvalid, "webhooks.Bad_Id")
}

func indexColon(s string) int {
	for i := range s {
		if s[i] == ':' {
			return i
		}
	}
	return len(s)
}
