package httpgw

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"switchboard/engine"
	"switchboard/scripting"
)

// TestScriptErrorsNameTheLine: a compile error and a runtime throw both name the script as
// NAME:LINE:COLUMN, in New's error and in the attempt's internal reason (never its code).
func TestScriptErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	cfg := baseConfig(t, "http://127.0.0.1:1/", "function prepare(m, p) {\n  return {target: 'x',, };\n}\nfunction receipt(r) { return null; }\n")
	cfg.ScriptName = "providers/sms/adapter.js"
	_, err := New(cfg)
	if err == nil || !errors.Is(err, scripting.ErrInvalidScript) || !strings.Contains(err.Error(), "providers/sms/adapter.js:2:") {
		t.Fatalf("New = %v", err)
	}
	g := newGateway(t, answerJSON(http.StatusOK, `{}`))
	cfg = baseConfig(t, g.URL+"/", "function prepare(m, p) {\n  var parts = m.parts;\n  return {target: parts.missing.x};\n}\nfunction receipt(r) { return null; }\n")
	cfg.ScriptName = "providers/sms/adapter.js"
	o := newTestProvider(t, cfg).Send(context.Background(), smsOutbound())
	if o.Class != engine.OutcomePermanent || o.Code != "script.failed" || !strings.Contains(o.Reason, "providers/sms/adapter.js:3:") {
		t.Fatalf("outcome = %+v", o)
	}
	if strings.Contains(o.Code, "adapter.js") {
		t.Fatalf("the code names the script: %q", o.Code)
	}
}

func TestCompileAdapterRules(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		source   string
		callback bool
		ok       bool
	}{
		"prepare only":                {"function prepare() {}", false, true},
		"prepare only, callbacks":     {"function prepare() {}", true, false},
		"receipt under callbacks":     {"function prepare() {}\nfunction receipt() {}", true, true},
		"callback under callbacks":    {"function prepare() {}\nfunction callback() {}", true, true},
		"no prepare":                  {"function receipt() {}", false, false},
		"callback that is not a func": {"function prepare() {}\nvar callback = 1;", true, false},
	} {
		err := CompileAdapter("adapter.js", tc.source, tc.callback, scripting.Limits{})
		if (err == nil) != tc.ok {
			t.Errorf("%s: CompileAdapter = %v, want ok=%t", name, err, tc.ok)
		}
	}
}
