package httpgw

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"switchboard/engine"
)

// TestPathTokenIsTheFirstSegmentUnderTheBase: the token goes after the baseUrl's path, before
// the adapter's target, and is written as it is (a Telegram bot token's colon included).
func TestPathTokenIsTheFirstSegmentUnderTheBase(t *testing.T) {
	t.Parallel()
	g := newGateway(t, answerJSON(http.StatusCreated, `{"id": "gw-1"}`))
	cfg := baseConfig(t, g.URL+"/api/", quickstartAdapter)
	cfg.Auth = Auth{Kind: AuthPathToken, Prefix: "bot", Token: "123456789:AAE-x_yZ0123"}
	p := newTestProvider(t, cfg)
	if o := p.Send(context.Background(), smsOutbound()); o.Class != engine.OutcomeAccepted {
		t.Fatalf("outcome %+v", o)
	}
	reqs := g.requests()
	if len(reqs) != 1 || reqs[0].Path != "/api/bot123456789:AAE-x_yZ0123/messages" {
		t.Fatalf("requests %+v", reqs)
	}
	if h := reqs[0].Header.Get("Authorization"); h != "" {
		t.Errorf("Authorization %q", h)
	}
	// prepare's view (adapter run) never holds the token.
	req, refused := p.Prepare(context.Background(), smsOutbound())
	if refused != nil || strings.Contains(req.URL, "AAE") {
		t.Fatalf("Prepare: %+v %+v", req, refused)
	}
}

// TestPathTokenAsTheLastSegment: with the target "./" the token ends the path (a webhook URL
// whose last segment is the secret), without a trailing slash; a query stays.
func TestPathTokenAsTheLastSegment(t *testing.T) {
	t.Parallel()
	const adapter = `function prepare(m, p) { return {target: m.parts.text, body: {text: "hi"}}; }
function receipt(r) { return null; }`
	for target, want := range map[string]string{"./": "/webhookb2/g@t/IncomingWebhook/abc/V2secret-token", "./?x=1": "/webhookb2/g@t/IncomingWebhook/abc/V2secret-token?x=1"} {
		g := newGateway(t, answerJSON(http.StatusOK, `1`))
		cfg := baseConfig(t, g.URL+"/webhookb2/g@t/IncomingWebhook/abc/", adapter)
		cfg.Auth = Auth{Kind: AuthPathToken, Token: "V2secret-token"}
		p := newTestProvider(t, cfg)
		out := smsOutbound()
		out.Parts = map[string]string{"text": target}
		if o := p.Send(context.Background(), out); o.Class != engine.OutcomeAccepted {
			t.Fatalf("%s: outcome %+v", target, o)
		}
		reqs := g.requests()
		got := ""
		if len(reqs) == 1 {
			got = reqs[0].Path
			if reqs[0].RawQuery != "" {
				got += "?" + reqs[0].RawQuery
			}
		}
		if got != want {
			t.Errorf("target %s: request %q, want %q", target, got, want)
		}
	}
}

// TestPathTokenThatNeedsEscapingIsRefused: New refuses a token that is not a path segment.
func TestPathTokenThatNeedsEscapingIsRefused(t *testing.T) {
	t.Parallel()
	for _, token := range []string{"", "abc/def", "abc def", "abc%2F", "a?b", "a#b", "é-token"} {
		cfg := baseConfig(t, "https://gw.example/api/", quickstartAdapter)
		cfg.Auth = Auth{Kind: AuthPathToken, Token: token}
		if p, err := New(cfg); err == nil {
			_ = p.Close()
			t.Errorf("token %q was accepted", token)
		}
	}
}
