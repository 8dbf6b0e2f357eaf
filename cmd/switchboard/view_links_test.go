package main

import (
	"encoding/json"
	"reflect"
	"sort"
	"testing"

	"switchboard/engine"
)

// TestViewLinksOfferWhatCanSucceed reads messages in each state as their submitter and as an
// operator: a view links only the actions that can succeed now, for that viewer, and each link
// offered does succeed.
func TestViewLinksOfferWhatCanSucceed(t *testing.T) {
	t.Parallel()
	f := newOpsFixture(t)
	e := f.e
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender, operator := e.token("case-system"), e.token("operations-console")
	submit := func(key string) string {
		a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: key, body: smsBody(nil)})
		if a.status != 202 {
			t.Fatalf("submit: %d %s", a.status, a.raw)
		}
		return a.json(t)["id"].(string)
	}
	links := func(token, id string) []string {
		t.Helper()
		a := e.do(request{method: "GET", path: "/v1/messages/" + id, token: token})
		if a.status != 200 {
			t.Fatalf("view %s: %d %s", id, a.status, a.raw)
		}
		o.check(t, "MessageView", a.raw)
		var v struct{ Links map[string]string }
		if err := json.Unmarshal(a.raw, &v); err != nil {
			t.Fatal(err)
		}
		var names []string
		for name, href := range v.Links {
			want := "/v1/messages/" + id
			if name != "self" {
				want += "/" + name
			}
			if href != want {
				t.Fatalf("link %s = %q, want %q", name, href, want)
			}
			names = append(names, name)
		}
		sort.Strings(names)
		return names
	}
	want := func(what string, got []string, names ...string) {
		t.Helper()
		if !reflect.DeepEqual(got, names) {
			t.Fatalf("%s: links %v, want %v", what, got, names)
		}
	}

	queued := submit("l1")
	want("queued, its submitter", links(sender, queued), "cancel", "self")
	want("queued, an operator", links(operator, queued), "cancel", "self")

	failed := submit("l2")
	f.finishAll(engine.AttemptPermanent, engine.DispatchFailed) // queued above fails too
	want("failed, its submitter", links(sender, failed), "self")
	want("failed, an operator", links(operator, failed), "retry", "self")
	if a := e.do(request{method: "POST", path: "/v1/messages/" + failed + "/retry", token: operator}); a.status != 200 {
		t.Fatalf("the offered retry: %d %s", a.status, a.raw)
	}
	want("retried, an operator", links(operator, failed), "cancel", "self")

	unknown := submit("l3")
	f.finishAll(engine.AttemptMaybeSent, engine.DispatchUnknown) // the retried one too
	want("unknown, its submitter", links(sender, unknown), "self")
	want("unknown, an operator", links(operator, unknown), "self", "settle")
	if a := e.do(request{method: "POST", path: "/v1/messages/" + unknown + "/settle", token: operator,
		body: map[string]string{"outcome": "sent"}}); a.status != 200 {
		t.Fatalf("the offered settle: %d %s", a.status, a.raw)
	}
	want("settled as sent (final), an operator", links(operator, unknown), "self")
	want("settled as sent (final), its submitter", links(sender, unknown), "self")

	cancelled := submit("l4")
	c := e.do(request{method: "POST", path: "/v1/messages/" + cancelled + "/cancel", token: sender})
	if c.status != 200 {
		t.Fatalf("the offered cancel: %d %s", c.status, c.raw)
	}
	o.check(t, "MessageView", c.raw)
	var view struct{ Links map[string]string }
	if err := json.Unmarshal(c.raw, &view); err != nil || len(view.Links) != 1 || view.Links["self"] == "" {
		t.Fatalf("the cancel answer's links %v (%v), want self only", view.Links, err)
	}
	want("cancelled, an operator", links(operator, cancelled), "self")
}
