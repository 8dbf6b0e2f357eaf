package httpgw

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"switchboard/engine"
	"switchboard/scripting"
)

// echoScript shows what a script sees of its argument, key order included.
const echoScript = `function f(x) {
	function walk(v) {
		if (v === null || typeof v !== 'object') return v;
		if (Array.isArray(v)) return v.map(walk);
		return Reflect.ownKeys(v).map(function (k) { return [k, walk(v[k])]; });
	}
	return walk(x);
}`

// mapMessage and mapProfile build the arguments as plain maps, as the provider did before it
// used scripting.Object: the reference the Objects must match.
func mapMessage(out *engine.Outbound, idempotent bool) map[string]any {
	parts := make(map[string]any, len(out.Parts))
	for name, text := range out.Parts {
		parts[name] = text
	}
	var key any
	if idempotent && out.IdempotencyKey != "" {
		key = out.IdempotencyKey
	}
	return map[string]any{"messageId": out.MessageID, "generation": out.Generation, "attempt": out.Attempt,
		"channel": string(out.Channel), "recipient": out.Recipient, "parts": parts, "idempotencyKey": key}
}

func mapProfile(sp engine.SenderProfileView, callbackURL string, params map[string]any) map[string]any {
	var segments, callback any
	if sp.MaximumSegments > 0 {
		segments = sp.MaximumSegments
	}
	if callbackURL != "" {
		callback = callbackURL
	}
	if params == nil {
		params = map[string]any{}
	}
	return map[string]any{"id": sp.ID, "channel": string(sp.Channel), "sender": sp.Sender, "maximumSegments": segments,
		"callbackUrl": callback, "parameters": params}
}

// TestInputsMatchMaps: the message, profile, response and callback arguments arrive exactly
// as the maps with the same members would.
func TestInputsMatchMaps(t *testing.T) {
	p, err := scripting.Compile("echo.js", echoScript, []string{"f"}, nil, scripting.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	seen := func(arg any) string {
		out, err := p.Call(context.Background(), "f", arg)
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	multi := smsOutbound()
	multi.Parts = map[string]string{"text": "t", "subject": "s", "html": "<p>", "body": "b"}
	noParts := smsOutbound()
	noParts.Parts, noParts.IdempotencyKey, noParts.SenderProfile.MaximumSegments = nil, "", 0
	for _, out := range []*engine.Outbound{smsOutbound(), multi, noParts} {
		for _, idempotent := range []bool{false, true} {
			if got, want := seen(messageInput(out, idempotent)), seen(mapMessage(out, idempotent)); got != want {
				t.Errorf("message %s, want %s", got, want)
			}
		}
		for _, extra := range []struct {
			url    string
			params map[string]any
		}{{"", nil}, {"https://sb.example/v1/provider-callbacks/sms", map[string]any{"accountId": "AC1", "region": "eu"}}} {
			if got, want := seen(profileInput(out.SenderProfile, extra.url, extra.params)), seen(mapProfile(out.SenderProfile, extra.url, extra.params)); got != want {
				t.Errorf("profile %s, want %s", got, want)
			}
		}
	}

	prov := &Provider{responseHeaders: headerSet([]string{"x-request-id", "retry-after"})}
	ans := &answer{status: 201, header: http.Header{"Content-Type": {"application/json"}, "X-Request-Id": {"a", "b"}},
		body: []byte(`{"id":"gw-1","n":12345678901234567890}`)}
	response := prov.responseInput(ans)
	reference := map[string]any{}
	for _, m := range response {
		reference[m.Name] = m.Value
	}
	if got, want := seen(response), seen(reference); got != want || !strings.Contains(got, `"status",201`) {
		t.Errorf("response %s, want %s", got, want)
	}
	body := []byte(`{"id":"gw-1","status":"delivered"}`)
	callback := callbackInput(callbackRequest("/cb?b=2&a=1&a=3", "application/json", body), body)
	reference = map[string]any{}
	for _, m := range callback {
		reference[m.Name] = m.Value
	}
	if got, want := seen(callback), seen(reference); got != want || !strings.Contains(got, `["method","POST"]`) {
		t.Errorf("callback %s, want %s", got, want)
	}
}
