package httpgw

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"switchboard/engine"
)

func TestSendBuildsTheQuickstartRequest(t *testing.T) {
	t.Parallel()
	g := newGateway(t, answerJSON(http.StatusCreated, `{"id": "gw-77"}`))
	p := newTestProvider(t, baseConfig(t, g.URL+"/api/v2/", quickstartAdapter))

	got := p.Send(context.Background(), smsOutbound())
	wantOutcome(t, got, engine.OutcomeAccepted, "")
	if got.ProviderReference != "gw-77" || got.Report != engine.ReportNone {
		t.Fatalf("reference %q report %q, want gw-77 and none", got.ProviderReference, got.Report)
	}
	reqs := g.requests()
	if len(reqs) != 1 {
		t.Fatalf("gateway saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/api/v2/messages" {
		t.Fatalf("request %s %s, want POST /api/v2/messages", r.Method, r.Path)
	}
	if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Request-Id") != "msg-0001" {
		t.Fatalf("headers %v lack the declared ones", r.Header)
	}
	if r.Header.Get("User-Agent") != userAgent {
		t.Fatalf("User-Agent %q", r.Header.Get("User-Agent"))
	}
	if r.Header.Get("Authorization") != "" {
		t.Fatalf("kind none sent Authorization %q", r.Header.Get("Authorization"))
	}
	var body map[string]string
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	want := map[string]string{"to": "+15550123", "from": "+15550100", "text": "Your appointment is on 2026-03-02 at 09:30.", "reference": "msg-0001"}
	for k, v := range want {
		if body[k] != v {
			t.Fatalf("body[%s] = %q, want %q (body %s)", k, body[k], v, r.Body)
		}
	}
}

func TestSendBodyFormats(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, method    string
		spec            map[string]any
		wantContentType string
		wantBody        string
		wantQuery       string
	}{
		{"json object by default", "post", map[string]any{"target": "send", "body": map[string]any{"a": 1}}, "application/json", `{"a":1}`, ""},
		{"form", "put", map[string]any{"target": "send", "bodyFormat": "form", "body": map[string]any{"To": "+1 555", "Body": "a&b"}}, "application/x-www-form-urlencoded", "Body=a%26b&To=%2B1+555", ""},
		{"text by default for a string", "post", map[string]any{"target": "send", "body": "hello"}, "text/plain; charset=utf-8", "hello", ""},
		{"text explicit", "patch", map[string]any{"target": "send", "bodyFormat": "text", "body": "héllo"}, "text/plain; charset=utf-8", "héllo", ""},
		{"no body", "get", map[string]any{"target": "send?to=%2B1555&x=1"}, "", "", "to=%2B1555&x=1"},
		{"declared content-type wins", "post", map[string]any{"target": "send", "headers": map[string]any{"Content-Type": "application/vnd.gw+json"}, "body": []any{1, 2}}, "application/vnd.gw+json", `[1,2]`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, answerJSON(http.StatusOK, `{}`))
			cfg := baseConfig(t, g.URL, specAdapter)
			cfg.Method = tc.method
			p := newTestProvider(t, cfg)
			wantOutcome(t, p.Send(context.Background(), specOutbound(t, tc.spec)), engine.OutcomeAccepted, "")
			r := g.requests()[0]
			if r.Method != strings.ToUpper(tc.method) || r.Path != "/send" || r.RawQuery != tc.wantQuery {
				t.Fatalf("request %s %s?%s", r.Method, r.Path, r.RawQuery)
			}
			if got := r.Header.Get("Content-Type"); got != tc.wantContentType {
				t.Fatalf("content-type %q, want %q", got, tc.wantContentType)
			}
			if string(r.Body) != tc.wantBody {
				t.Fatalf("body %q, want %q", r.Body, tc.wantBody)
			}
		})
	}
}

func TestSendRefusesBadPrepareOutput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		spec map[string]any
		code string
	}{
		{"parent traversal", map[string]any{"target": "../../admin"}, CodeTargetRefused},
		{"absolute url", map[string]any{"target": "https://evil.example/"}, CodeTargetRefused},
		{"scheme-relative", map[string]any{"target": "//evil.example/x"}, CodeTargetRefused},
		{"encoded dot segment", map[string]any{"target": "%2e%2e/x"}, CodeTargetRefused},
		{"mixed encoded dot segment", map[string]any{"target": "a/.%2E/../x"}, CodeTargetRefused},
		{"encoded slash and dots", map[string]any{"target": "a%2f..%2f..%2fadmin"}, CodeTargetRefused},
		{"backslash", map[string]any{"target": "..\\admin"}, CodeTargetRefused},
		{"root-relative leaves the base path", map[string]any{"target": "/admin"}, CodeTargetRefused},
		{"other scheme", map[string]any{"target": "javascript:alert(1)"}, CodeTargetRefused},
		{"empty", map[string]any{"target": ""}, CodeTargetRefused},
		{"dot then traversal", map[string]any{"target": "./../admin"}, CodeTargetRefused},
		{"dot then a path", map[string]any{"target": "./m"}, CodeTargetRefused},
		{"undeclared header", map[string]any{"target": "m", "headers": map[string]any{"x-evil": "1"}}, CodeHeaderRefused},
		{"runtime-owned header", map[string]any{"target": "m", "headers": map[string]any{"Authorization": "Bearer x"}}, CodeHeaderRefused},
		{"header with newline", map[string]any{"target": "m", "headers": map[string]any{"x-request-id": "a\r\nX-Evil: 1"}}, CodeHeaderRefused},
		{"form of numbers", map[string]any{"target": "m", "bodyFormat": "form", "body": map[string]any{"a": 1}}, CodeBodyInvalid},
		{"text of an object", map[string]any{"target": "m", "bodyFormat": "text", "body": map[string]any{}}, CodeBodyInvalid},
		{"unknown body format", map[string]any{"target": "m", "bodyFormat": "xml", "body": "<a/>"}, CodeBodyInvalid},
		{"unknown member", map[string]any{"target": "m", "url": "https://evil.example/"}, "script.output-invalid"},
		{"header value not a string", map[string]any{"target": "m", "headers": map[string]any{"x-request-id": 5}}, "script.output-invalid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, answerJSON(http.StatusOK, `{}`))
			p := newTestProvider(t, baseConfig(t, g.URL+"/api/", specAdapter))
			wantOutcome(t, p.Send(context.Background(), specOutbound(t, tc.spec)), engine.OutcomePermanent, tc.code)
			if n := len(g.requests()); n != 0 {
				t.Fatalf("gateway saw %d requests for a refused prepare output", n)
			}
		})
	}
}

func TestResolveTarget(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://sms.example/api/")
	good := map[string]string{
		"messages":             "https://sms.example/api/messages",
		"v1/sms?to=%2B1":       "https://sms.example/api/v1/sms?to=%2B1",
		"a%20b":                "https://sms.example/api/a%20b",
		"/api/messages":        "https://sms.example/api/messages",
		"messages.json":        "https://sms.example/api/messages.json",
		"..messages":           "https://sms.example/api/..messages",
		"?only=query":          "https://sms.example/api/?only=query",
		"dir/file;matrix=1..2": "https://sms.example/api/dir/file;matrix=1..2",
	}
	for target, want := range good {
		got, err := resolveTarget(base, target)
		if err != nil || got.String() != want {
			t.Errorf("resolveTarget(%q) = %v, %v; want %s", target, got, err, want)
		}
	}
	for _, target := range []string{"../x", "a/../../x", "./x", "%2E%2E/x", ".%2e/x", "%2e./x", "http:x", "HTTPS://evil/",
		"//evil", "/\\evil", "x#frag", "x\ty", "/api", "/apix/y", "a\x00b", "mailto:a@b"} {
		if got, err := resolveTarget(base, target); err == nil {
			t.Errorf("resolveTarget(%q) = %v, want a refusal", target, got)
		}
	}
}

// TestResolveRemembersLastTarget: the provider's resolve answers as resolveTarget does
// whatever order targets come in, refusals included.
func TestResolveRemembersLastTarget(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://sms.example/api/")
	p := &Provider{cfg: Config{BaseURL: base}}
	for _, target := range []string{"messages", "messages", "v1/sms?to=%2B1", "../x", "messages", "../x", "../x", "a%20b", "a%20b", "//evil"} {
		want, wantErr := resolveTarget(base, target)
		got, err := p.resolve(target)
		if (err == nil) != (wantErr == nil) || err == nil && got != want.String() || err != nil && err.Error() != wantErr.Error() {
			t.Errorf("resolve(%q) = %q, %v; resolveTarget gives %v, %v", target, got, err, want, wantErr)
		}
	}
}

// TestBuildHeaders: the declared headers a prepare output sets, whatever their case, end up
// in the request as http.Header.Set puts them.
func TestBuildHeaders(t *testing.T) {
	t.Parallel()
	p := newTestProvider(t, baseConfig(t, "http://127.0.0.1:1/api/", quickstartAdapter))
	headers := map[string]string{"X-REQUEST-ID": "a", "content-type": "text/plain", "Idempotency-Key": "k"}
	req, err := p.build(&prepareOutput{Target: "m", Headers: headers, Body: []byte(`"text"`)})
	if err != nil {
		t.Fatal(err)
	}
	want := http.Header{}
	for name, value := range headers {
		want.Set(strings.ToLower(name), value)
	}
	want.Set("User-Agent", userAgent)
	if !reflect.DeepEqual(req.header, want) {
		t.Fatalf("headers %v, want %v", req.header, want)
	}
}

func TestNewRefusesRuntimeOwnedDeclaredHeaders(t *testing.T) {
	t.Parallel()
	for _, header := range []string{"Authorization", "host", "content-length", "cookie", "x-api-key"} {
		cfg := baseConfig(t, "https://sms.example/", quickstartAdapter)
		cfg.Auth = Auth{Kind: AuthStaticAPIKey, Header: "X-Api-Key", Token: "k"}
		cfg.RequestHeaders = append(cfg.RequestHeaders, header)
		if _, err := New(cfg); err == nil {
			t.Errorf("New accepted declared request header %q", header)
		}
	}
}

func TestPrepareInputCarriesIdempotencyKeyOnlyWhenIdempotent(t *testing.T) {
	t.Parallel()
	const echo = `function prepare(m, p) {
  return {target: "m", body: {key: m.idempotencyKey, gen: m.generation, attempt: m.attempt, channel: m.channel,
    profile: p.id, segments: p.maximumSegments}};
}`
	for _, idempotent := range []bool{false, true} {
		g := newGateway(t, answerJSON(http.StatusOK, `{}`))
		cfg := baseConfig(t, g.URL, echo)
		cfg.IdempotentSubmit = idempotent
		cfg.ReceiptsCallback = false
		p := newTestProvider(t, cfg)
		got := p.Send(context.Background(), smsOutbound())
		wantOutcome(t, got, engine.OutcomeAccepted, "")
		if got.Report != engine.ReportUnavailable {
			t.Fatalf("report %q without receipts, want unavailable", got.Report)
		}
		want := `{"attempt":1,"channel":"sms","gen":1,"key":null,"profile":"reminders-sms","segments":3}`
		if idempotent {
			want = strings.Replace(want, `"key":null`, `"key":"idem-1"`, 1)
		}
		var gotBody any
		if err := json.Unmarshal(g.requests()[0].Body, &gotBody); err != nil {
			t.Fatalf("body: %v", err)
		}
		if gb, _ := json.Marshal(gotBody); string(gb) != want {
			t.Fatalf("idempotent=%v: body %s, want %s", idempotent, gb, want)
		}
	}
}
