package httpgw

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/scripting"
)

// receiptProvider is a provider running source, whose receipt calls have the default deadline
// (a loaded machine must not turn a throw into a deadline).
func receiptProvider(t *testing.T, source string) *Provider {
	t.Helper()
	return newTestProvider(t, baseConfig(t, "http://127.0.0.1:1/", source))
}

// stuckReceiptProvider is a provider running source with a 20 ms receipt deadline, for scripts
// that never end on their own.
func stuckReceiptProvider(t *testing.T, source string) *Provider {
	t.Helper()
	cfg := baseConfig(t, "http://127.0.0.1:1/", source)
	cfg.Limits = scripting.Limits{Deadlines: map[string]time.Duration{"receipt": 20 * time.Millisecond}}
	return newTestProvider(t, cfg)
}

func TestParseReceiptsQuickstart(t *testing.T) {
	t.Parallel()
	p := receiptProvider(t, quickstartAdapter)
	cases := []struct {
		name, body string
		want       []engine.Receipt
	}{
		{"one", `{"id":"gw-1","status":"delivered"}`, []engine.Receipt{{ProviderReference: "gw-1", Report: engine.ReportDelivered}}},
		{"array", `[{"id":"gw-1","status":"sent"},{"id":"gw-2","status":"undelivered"}]`,
			[]engine.Receipt{{ProviderReference: "gw-1", Report: engine.ReportSent}, {ProviderReference: "gw-2", Report: engine.ReportUndelivered}}},
		{"not json is ignored (null)", `hello`, nil},
		{"empty array is ignored", `[]`, nil},
	}
	for _, tc := range cases {
		got, err := p.ParseReceipts(context.Background(), callbackRequest("/cb", "application/json", []byte(tc.body)), []byte(tc.body))
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: ParseReceipts = %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}
}

func TestParseReceiptsUnreadable(t *testing.T) {
	t.Parallel()
	p := receiptProvider(t, quickstartAdapter)
	for name, body := range map[string]string{
		"invalid report":              `{"id":"gw-1","status":"read"}`,
		"report none":                 `{"id":"gw-1","status":"none"}`,
		"missing reference":           `{"status":"delivered"}`,
		"numeric reference":           `{"id":5,"status":"delivered"}`,
		"one bad entry in an array":   `[{"id":"gw-1","status":"sent"},{"id":"gw-2","status":"lost"}]`,
		"reference with a newline":    `{"id":"gw\n1","status":"delivered"}`,
		"reference of 300 characters": fmt.Sprintf(`{"id":"%0300d","status":"delivered"}`, 1),
		"array with a null":           `[null]`,
		"array with a string":         `["gw-1"]`,
	} {
		got, err := p.ParseReceipts(context.Background(), callbackRequest("/cb", "application/json", []byte(body)), []byte(body))
		if !errors.Is(err, engine.ErrCallbackUnreadable) || got != nil {
			t.Errorf("%s: ParseReceipts = %+v, %v; want ErrCallbackUnreadable", name, got, err)
		}
		if engine.CodeOf(err) != engine.CodeCallbackUnreadable {
			t.Errorf("%s: code %q", name, engine.CodeOf(err))
		}
	}
}

func TestParseReceiptsScriptFailures(t *testing.T) {
	t.Parallel()
	for name, source := range map[string]string{
		"throws":           `function prepare(m,p){return {target:"m"};} function receipt(r){ throw new Error("no"); }`,
		"unknown member":   `function prepare(m,p){return {target:"m"};} function receipt(r){ return {providerReference:"a", report:"sent", extra:1}; }`,
		"returns a string": `function prepare(m,p){return {target:"m"};} function receipt(r){ return "delivered"; }`,
		"returns a number": `function prepare(m,p){return {target:"m"};} function receipt(r){ return 1; }`,
	} {
		p := receiptProvider(t, source)
		_, err := p.ParseReceipts(context.Background(), callbackRequest("/cb", "application/json", []byte(`{}`)), []byte(`{}`))
		if !errors.Is(err, engine.ErrCallbackUnreadable) {
			t.Errorf("%s: err = %v, want ErrCallbackUnreadable", name, err)
		}
	}
}

// TestParseReceiptsOutOfTime: a receipt script that runs out of time did not read the callback;
// the answer is service.unavailable (503), so that the gateway posts it again, never unreadable.
func TestParseReceiptsOutOfTime(t *testing.T) {
	t.Parallel()
	p := stuckReceiptProvider(t, `function prepare(m,p){return {target:"m"};} function receipt(r){ for(;;){} }`)
	_, err := p.ParseReceipts(context.Background(), callbackRequest("/cb", "application/json", []byte(`{}`)), []byte(`{}`))
	if errors.Is(err, engine.ErrCallbackUnreadable) || engine.CodeOf(err) != engine.CodeServiceUnavailable {
		t.Fatalf("err = %v (code %q), want service.unavailable", err, engine.CodeOf(err))
	}
}

func TestParseReceiptsRequestInput(t *testing.T) {
	t.Parallel()
	const echo = `
function prepare(m, p) { return {target: "m"}; }
function receipt(r) {
  return {providerReference: [r.method, r.query.a, r.form === null ? "noform" : r.form.MessageSid + "," + r.form.B,
    r.json === null ? "nojson" : String(r.json.n), r.body.length].join("|"), report: "sent", code: "gw.ok"};
}`
	p := receiptProvider(t, echo)
	cases := []struct{ target, contentType, body, want string }{
		{"/cb?a=1&a=2", "application/x-www-form-urlencoded", "MessageSid=SM1&B=x&B=y", "POST|1|SM1,x|nojson|22"},
		{"/cb", "application/json; charset=utf-8", `{"n": 3}`, "POST||noform|3|8"},
		{"/cb", "", `{"n": 4}`, "POST||noform|4|8"},
		{"/cb", "text/plain", `{"n": 5}`, "POST||noform|nojson|8"},
		{"/cb", "application/json", `{"n": 5`, "POST||noform|nojson|7"},
	}
	for _, tc := range cases {
		got, err := p.ParseReceipts(context.Background(), callbackRequest(tc.target, tc.contentType, []byte(tc.body)), []byte(tc.body))
		if err != nil || len(got) != 1 || got[0].ProviderReference != tc.want || got[0].Code != "gw.ok" {
			t.Errorf("%s %q: %+v, %v; want reference %q", tc.contentType, tc.body, got, err, tc.want)
		}
	}
}

func TestParseReceiptsWithoutReceiptFunction(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(t, "http://127.0.0.1:1/", `function prepare(m, p) { return {target: "m"}; }`)
	cfg.ReceiptsCallback = false
	p := newTestProvider(t, cfg)
	_, err := p.ParseReceipts(context.Background(), callbackRequest("/cb", "application/json", []byte(`{}`)), []byte(`{}`))
	if !errors.Is(err, engine.ErrCallbackUnreadable) {
		t.Fatalf("err = %v, want ErrCallbackUnreadable", err)
	}
	cfg.ReceiptsCallback = true
	if _, err := New(cfg); err == nil {
		t.Fatal("New accepted receipts: callback without a receipt function")
	}
}
