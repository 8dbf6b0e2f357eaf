package api

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"switchboard/engine"
)

// TestConsoleOnlyWhenEnabled: /console/ is a 404 problem unless the runtime enables it; once
// enabled, the policy lets scripts reach this origin and the issuer's only.
func TestConsoleOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	get := func(s *Server, path string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		return w
	}
	off := New(Config{Clock: engine.SystemClock{}, Logger: slog.New(slog.DiscardHandler)})
	if w := get(off, "/console/"); w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), `"request.not-found"`) {
		t.Fatalf("disabled console: %d %s", w.Code, w.Body)
	}
	on := New(Config{Clock: engine.SystemClock{}, Logger: slog.New(slog.DiscardHandler),
		Console: ConsoleConfig{Enabled: true, ClientID: "ops", Issuer: "https://id.example/realms/ops", Scopes: []string{"a", "b"}}})
	w := get(on, "/console/")
	want := "default-src 'self'; connect-src 'self' https://id.example; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
	if w.Code != 200 || w.Header().Get("Content-Security-Policy") != want {
		t.Fatalf("enabled console: %d, CSP %q", w.Code, w.Header().Get("Content-Security-Policy"))
	}
	if w := get(on, "/console/config.json"); !strings.Contains(w.Body.String(), `"scope":"a b"`) {
		t.Fatalf("config %s", w.Body)
	}
	if got := consolePolicy(""); got != "default-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'" {
		t.Fatalf("policy without an issuer origin: %q", got)
	}
}
