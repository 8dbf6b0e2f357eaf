package httpgw

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"switchboard/engine"
)

// leakyBody tries to carry each message's recipient into the next message's request: it puts
// in the request body what it finds of earlier messages, the value of count() and the name
// of the exception each write attempt threw.
const leakyBody = `
var seen = [];
let state = {last: null};
const recent = [];

function prepare(message, profile) {
  var r = message.recipient;
  var found = [seen.slice(), state.last, recent.slice(), globalThis.stash || null,
    typeof undeclaredStash === "undefined" ? null : undeclaredStash, ({}).stash || null, [].stash || null];
  var errors = {};
  function attempt(name, fn) { try { fn(); } catch (e) { errors[name] = e.name; } }
  attempt("var array", function () { seen.push(r); });
  attempt("let object", function () { state.last = r; });
  attempt("array held by a constant", function () { recent.push(r); });
  attempt("globalThis", function () { globalThis.stash = r; });
  attempt("undeclared global", function () { undeclaredStash = r; });
  attempt("Object.prototype", function () { Object.prototype.stash = r; });
  attempt("Array.prototype", function () { Array.prototype.stash = r; });
  return {target: "messages", headers: {"content-type": "application/json"}, bodyFormat: "json",
    body: {to: r, found: found, count: count(), errors: errors}};
}
function interpret(response) { return {outcome: "accepted", providerReference: "gw-1"}; }
function receipt(request) { return null; }`

// leakyAdapter adds a closure counter, whose top-level call sends the script down the path
// where its top-level code runs again for every call.
const leakyAdapter = leakyBody + `
const count = (function () { var n = 0; return function () { return n++; }; })();`

// frozenLeakyAdapter only declares functions and tables: the sandbox runs its top-level code
// once per runtime and freezes what it built, so every write to its own state throws too.
const frozenLeakyAdapter = leakyBody + `
function count() { return 0; }`

// TestMessagesCannotReachEachOther sends two messages through a real provider and checks
// that the second request holds nothing of the first recipient, whatever the adapter tried,
// and that its writes to shared state failed as they must: with an adapter that keeps a
// closure counter (its top-level code runs again for every call, so its own state starts
// afresh) and with one that only declares tables (they are frozen, so writing them throws).
func TestMessagesCannotReachEachOther(t *testing.T) {
	t.Parallel()
	shared := map[string]string{
		"globalThis": "TypeError", "undeclared global": "ReferenceError",
		"Object.prototype": "TypeError", "Array.prototype": "TypeError",
	}
	frozen := map[string]string{"var array": "TypeError", "let object": "TypeError", "array held by a constant": "TypeError"}
	for k, v := range shared {
		frozen[k] = v
	}
	for _, tc := range []struct {
		name, source string
		errors       map[string]string
	}{
		{"fresh scope per call", leakyAdapter, shared},
		{"frozen scope", frozenLeakyAdapter, frozen},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gw := newGateway(t, answerJSON(http.StatusOK, `{"id":"gw-1"}`))
			p := newTestProvider(t, baseConfig(t, gw.URL+"/", tc.source))
			sendTwoRecipients(t, gw, p, tc.errors)
		})
	}
}

// sendTwoRecipients sends one message to each of two recipients and checks the requests.
func sendTwoRecipients(t *testing.T, gw *gateway, p *Provider, want map[string]string) {
	t.Helper()
	first, second := "+15550100001", "+15550100002"
	for i, r := range []string{first, second} {
		out := smsOutbound()
		out.MessageID, out.Recipient = "msg-"+r, r
		wantOutcome(t, p.Send(context.Background(), out), engine.OutcomeAccepted, "")
		if n := len(gw.requests()); n != i+1 {
			t.Fatalf("gateway saw %d requests", n)
		}
	}
	reqs := gw.requests()
	if strings.Contains(string(reqs[1].Body), first) {
		t.Fatalf("the second request carries the first recipient: %s", reqs[1].Body)
	}
	for i, req := range reqs {
		var body struct {
			To     string            `json:"to"`
			Found  []any             `json:"found"`
			Count  int               `json:"count"`
			Errors map[string]string `json:"errors"`
		}
		if err := json.Unmarshal(req.Body, &body); err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		found, _ := json.Marshal(body.Found)
		if string(found) != `[[],null,[],null,null,null,null]` || body.Count != 0 {
			t.Errorf("request %d found %s of earlier messages (counter %d)", i+1, found, body.Count)
		}
		if len(body.Errors) != len(want) {
			t.Errorf("request %d: errors %v, want exactly %v", i+1, body.Errors, want)
		}
		for name, class := range want {
			if body.Errors[name] != class {
				t.Errorf("request %d: %s threw %q, want %s", i+1, name, body.Errors[name], class)
			}
		}
	}
}
