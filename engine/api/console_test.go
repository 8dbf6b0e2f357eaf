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

// TestConsoleHeadersOnEveryAnswer: every answer under /console/ carries the console's security
// headers, also those the router writes itself (the redirect of an unclean path, the 405 of
// another method) and a refused request; answers elsewhere do not.
func TestConsoleHeadersOnEveryAnswer(t *testing.T) {
	t.Parallel()
	s := New(Config{Clock: engine.SystemClock{}, Logger: slog.New(slog.DiscardHandler),
		Console: ConsoleConfig{Enabled: true, ClientID: "ops", Issuer: "https://id.example/realms/ops"}})
	cases := []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/console/", http.StatusOK},
		{http.MethodGet, "/console/./app.js", http.StatusTemporaryRedirect},
		{http.MethodGet, "/console//app.js", http.StatusTemporaryRedirect},
		{http.MethodGet, "/console", http.StatusTemporaryRedirect},
		{http.MethodPost, "/console/", http.StatusMethodNotAllowed},
		{http.MethodGet, "/console/no-such-file.js", http.StatusNotFound},
	}
	for _, tc := range cases {
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		h := w.Header()
		if w.Code != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, w.Code, tc.status)
		}
		if !strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'self'") || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("Referrer-Policy") != "no-referrer" || h.Get("Cross-Origin-Opener-Policy") != "same-origin" {
			t.Errorf("%s %s (%d) lacks the console's headers: %v", tc.method, tc.path, w.Code, h)
		}
	}
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/health", nil))
	if w.Header().Get("Content-Security-Policy") != "" && strings.Contains(w.Header().Get("Content-Security-Policy"), "connect-src") {
		t.Errorf("/health carries the console's policy: %v", w.Header())
	}
}
