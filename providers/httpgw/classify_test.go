package httpgw

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/retryafter"
	"switchboard/scripting"
)

// plainAdapter has no interpret: the default table classifies.
const plainAdapter = `
function prepare(message, profile) { return {target: "messages", body: {to: message.recipient}}; }
function receipt(request) { return null; }
`

func TestDefaultClassificationTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		status int
		class  engine.OutcomeClass
	}{
		{200, engine.OutcomeAccepted}, {201, engine.OutcomeAccepted}, {202, engine.OutcomeAccepted}, {204, engine.OutcomeAccepted},
		{408, engine.OutcomeTransient}, {429, engine.OutcomeTransient}, {503, engine.OutcomeTransient},
		{500, engine.OutcomeMaybeSent}, {502, engine.OutcomeMaybeSent}, {504, engine.OutcomeMaybeSent},
		{400, engine.OutcomePermanent}, {401, engine.OutcomePermanent}, {403, engine.OutcomePermanent},
		{404, engine.OutcomePermanent}, {409, engine.OutcomePermanent}, {422, engine.OutcomePermanent},
		{501, engine.OutcomePermanent}, {304, engine.OutcomePermanent},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, answerJSON(tc.status, `{"id":"x"}`))
			p := newTestProvider(t, baseConfig(t, g.URL, plainAdapter))
			code := "http." + strconv.Itoa(tc.status)
			if tc.class == engine.OutcomeAccepted {
				code = ""
			}
			got := p.Send(context.Background(), smsOutbound())
			wantOutcome(t, got, tc.class, code)
			if got.ProviderReference != "" {
				t.Fatalf("default table gave reference %q", got.ProviderReference)
			}
		})
	}
}

func TestRetryAfterIsHonoured(t *testing.T) {
	t.Parallel()
	cases := map[string]time.Duration{
		"120":                           120 * time.Second,
		"Sun, 01 Mar 2026 12:02:30 GMT": 150 * time.Second, // the fake clock reads 12:00:00
		"Sun, 01 Mar 2026 11:00:00 GMT": 0,
		"soon":                          0,
		"-5":                            0,
		"99999999999":                   retryafter.Max,
	}
	for header, want := range cases {
		g := newGateway(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", header)
			w.WriteHeader(http.StatusTooManyRequests)
		})
		p := newTestProvider(t, baseConfig(t, g.URL, plainAdapter))
		got := p.Send(context.Background(), smsOutbound())
		wantOutcome(t, got, engine.OutcomeTransient, "http.429")
		if got.RetryAfter != want {
			t.Errorf("Retry-After %q gave %v, want %v", header, got.RetryAfter, want)
		}
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	elsewhere := newGateway(t, answerJSON(http.StatusOK, `{}`))
	g := newGateway(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/stolen", http.StatusFound)
	})
	p := newTestProvider(t, baseConfig(t, g.URL, quickstartAdapter))
	wantOutcome(t, p.Send(context.Background(), smsOutbound()), engine.OutcomePermanent, "http.302")
	if n := len(elsewhere.requests()); n != 0 {
		t.Fatalf("the redirect was followed (%d requests elsewhere)", n)
	}
}

func TestOversizedAnswerIsMaybeSent(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 100)
	for name, h := range map[string]http.HandlerFunc{
		"with content-length": answerJSON(http.StatusCreated, `{"id":"`+big+`"}`),
		"chunked": func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusCreated)
			for range 10 {
				_, _ = io.WriteString(w, big)
				w.(http.Flusher).Flush()
			}
		},
	} {
		g := newGateway(t, h)
		cfg := baseConfig(t, g.URL, quickstartAdapter)
		cfg.MaximumResponseBytes = 64
		p := newTestProvider(t, cfg)
		got := p.Send(context.Background(), smsOutbound())
		if got.Class != engine.OutcomeMaybeSent || got.Code != CodeResponseTooLarge {
			t.Errorf("%s: %+v, want maybe-sent %s", name, got, CodeResponseTooLarge)
		}
	}
	// Exactly at the cap is read and interpreted.
	body := `{"id":"abc"}`
	g := newGateway(t, answerJSON(http.StatusCreated, body))
	cfg := baseConfig(t, g.URL, quickstartAdapter)
	cfg.MaximumResponseBytes = int64(len(body))
	p := newTestProvider(t, cfg)
	if got := p.Send(context.Background(), smsOutbound()); got.Class != engine.OutcomeAccepted || got.ProviderReference != "abc" {
		t.Fatalf("answer at the cap: %+v", got)
	}
}

func TestInterpretResults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, verdict string
		status        int
		retryHeader   string
		class         engine.OutcomeClass
		code, ref     string
		retryAfter    time.Duration
	}{
		{"accepted with reference", `{"outcome":"accepted","providerReference":"SM123"}`, 200, "", engine.OutcomeAccepted, "", "SM123", 0},
		{"permanent with code on a 200", `{"outcome":"permanent","code":"gw.blocked-number"}`, 200, "", engine.OutcomePermanent, "gw.blocked-number", "", 0},
		{"accepted on a 400 (gateway quirk)", `{"outcome":"accepted","providerReference":"dup-1"}`, 400, "", engine.OutcomeAccepted, "", "dup-1", 0},
		{"transient with retryAfter", `{"outcome":"transient","retryAfter":30,"code":"gw.busy"}`, 200, "", engine.OutcomeTransient, "gw.busy", "", 30 * time.Second},
		{"transient falls back to Retry-After", `{"outcome":"transient"}`, 429, "7", engine.OutcomeTransient, "http.429", "", 7 * time.Second},
		{"maybe-sent", `{"outcome":"maybe-sent","code":"gw.unclear"}`, 200, "", engine.OutcomeMaybeSent, "gw.unclear", "", 0},
		{"null uses the default table", `null`, 503, "3", engine.OutcomeTransient, "http.503", "", 3 * time.Second},
		{"permanent without code after 2xx", `{"outcome":"permanent"}`, 201, "", engine.OutcomeMaybeSent, "script.output-invalid", "", 0},
		{"unknown outcome after 2xx", `{"outcome":"sent"}`, 200, "", engine.OutcomeMaybeSent, "script.output-invalid", "", 0},
		{"unknown member after 2xx", `{"outcome":"accepted","extra":1}`, 200, "", engine.OutcomeMaybeSent, "script.output-invalid", "", 0},
		{"bad code on a 400", `{"outcome":"permanent","code":"bad code!"}`, 400, "", engine.OutcomePermanent, "script.output-invalid", "", 0},
		{"negative retryAfter on a 429", `{"outcome":"transient","retryAfter":-1}`, 429, "", engine.OutcomeTransient, "script.output-invalid", "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g := newGateway(t, func(w http.ResponseWriter, _ *http.Request) {
				if tc.retryHeader != "" {
					w.Header().Set("Retry-After", tc.retryHeader)
				}
				answerJSON(tc.status, `{"verdict":`+tc.verdict+`}`)(w, nil)
			})
			p := newTestProvider(t, baseConfig(t, g.URL, specAdapter))
			got := p.Send(context.Background(), specOutbound(t, map[string]any{"target": "m"}))
			wantOutcome(t, got, tc.class, tc.code)
			if got.ProviderReference != tc.ref || got.RetryAfter != tc.retryAfter {
				t.Fatalf("reference %q retryAfter %v, want %q %v", got.ProviderReference, got.RetryAfter, tc.ref, tc.retryAfter)
			}
		})
	}
}

func TestInterpretSeesOnlyDeclaredHeadersAndDecodedBodies(t *testing.T) {
	t.Parallel()
	const adapter = `
function prepare(m, p) { return {target: "m"}; }
function interpret(r) {
  var b = typeof r.body === "string" ? "text:" + r.body : "json:" + r.body.n;
  return {outcome: "accepted", providerReference: r.headers["x-rate-limit-remaining"] + "/" + typeof r.headers["x-secret"] + "/" + r.status + "/" + b};
}
function receipt(r) { return null; }`
	for _, tc := range []struct{ contentType, body, want string }{
		{"application/json", `{"n": 12345678901234567890}`, "42/undefined/201/json:12345678901234567000"},
		{"application/problem+json", `{"n": 1.5}`, "42/undefined/201/json:1.5"},
		{"application/x-amz-json-1.0", `{"n": 2}`, "42/undefined/201/json:2"}, // AWS JSON 1.0 (End User Messaging SMS)
		{"application/x-amz-json-1.1", `{"n": 3}`, "42/undefined/201/json:3"},
		{"text/plain", `{"n": 1}`, `42/undefined/201/text:{"n": 1}`},
		{"application/json", `not json`, "42/undefined/201/text:not json"},
	} {
		g := newGateway(t, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("X-Rate-Limit-Remaining", "42")
			w.Header().Set("X-Secret", "s")
			w.Header().Set("Content-Type", tc.contentType)
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, tc.body)
		})
		p := newTestProvider(t, baseConfig(t, g.URL, adapter))
		if got := p.Send(context.Background(), smsOutbound()); got.ProviderReference != tc.want {
			t.Errorf("%s %s: reference %q, want %q", tc.contentType, tc.body, got.ProviderReference, tc.want)
		}
	}
}

func TestInterpretFailures(t *testing.T) {
	t.Parallel()
	const throwing = `
function prepare(m, p) { return {target: "m"}; }
function interpret(r) { if (r.status === 299) { for (;;) {} } throw new Error("boom"); }
function receipt(r) { return null; }`
	cases := []struct {
		status int
		class  engine.OutcomeClass
		code   string
	}{
		{201, engine.OutcomeMaybeSent, "script.failed"}, // the gateway may have taken it
		{299, engine.OutcomeMaybeSent, "script.deadline"},
		{429, engine.OutcomeTransient, "script.failed"}, // the default table's class
		{400, engine.OutcomePermanent, "script.failed"},
		{502, engine.OutcomeMaybeSent, "script.failed"},
	}
	for _, tc := range cases {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			t.Parallel()
			var observed []string
			g := newGateway(t, answerJSON(tc.status, `{}`))
			cfg := baseConfig(t, g.URL, throwing)
			cfg.Limits = scripting.Limits{Deadlines: map[string]time.Duration{"interpret": 20 * time.Millisecond}}
			cfg.Observer = func(event, class string) { observed = append(observed, event+":"+class) }
			p := newTestProvider(t, cfg)
			wantOutcome(t, p.Send(context.Background(), smsOutbound()), tc.class, tc.code)
			want := fmt.Sprintf("[script:ok script:%s]", strings.TrimPrefix(tc.code, "script."))
			if got := fmt.Sprint(observed); got != want {
				t.Fatalf("observed %s, want %s", got, want)
			}
		})
	}
}
