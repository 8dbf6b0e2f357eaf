package api

import (
	"embed"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"

	"switchboard/engine"
)

// The operator console (docs/console.md): static files embedded in the binary, served under
// /console/ when the runtime file enables it. The console calls only the public API, with the
// operator's bearer token; it loads nothing from another origin.

//go:embed console
var consoleFiles embed.FS

// ConsoleConfig turns the console on and says how it signs in.
type ConsoleConfig struct {
	Enabled bool
	// ClientID is the OAuth public client the console signs in as (authorization code, PKCE).
	ClientID string
	// Issuer is the OIDC issuer: the console reads its endpoints from
	// Issuer/.well-known/openid-configuration.
	Issuer string
	// Scopes are asked for at sign-in: the required scopes of the client's access profile.
	Scopes []string
}

// consoleConfigView is /console/config.json.
type consoleConfigView struct {
	Issuer   string `json:"issuer"`
	ClientID string `json:"clientId"`
	Scope    string `json:"scope"`
}

// consoleHandler serves the console's files (Handler has set the console's security headers).
func (s *Server) consoleHandler() http.HandlerFunc {
	files, _ := fs.Sub(consoleFiles, "console")
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		name := strings.TrimPrefix(r.URL.Path, "/console/")
		switch name {
		case "config.json":
			writeJSON(w, http.StatusOK, consoleConfigView{Issuer: s.cfg.Console.Issuer, ClientID: s.cfg.Console.ClientID,
				Scope: strings.Join(s.cfg.Console.Scopes, " ")})
			return
		case "", "callback":
			name = "index.html" // one page; the script reads the path and the fragment
		}
		b, err := fs.ReadFile(files, name)
		if err != nil || strings.Contains(name, "/") {
			s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestNotFound, "no such console file"))
			return
		}
		h.Set("Content-Type", contentTypeOf(name))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(b)
		}
	}
}

// underConsole reports whether an answer to path is the console's: /console and all below it.
func underConsole(path string) bool {
	return path == "/console" || strings.HasPrefix(path, "/console/")
}

// setConsoleHeaders sets the console's security headers: its policy, no referrer, no framing,
// and a browsing context of its own.
func (s *Server) setConsoleHeaders(h http.Header) {
	h.Set("Content-Security-Policy", s.consoleCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

// consolePolicy is the Content-Security-Policy of every console response: this origin only,
// except that scripts may also call the issuer (its discovery document and token endpoint).
// No inline script or style, no frames, forms only to this origin.
func consolePolicy(issuer string) string {
	connect := ""
	if u, err := url.Parse(issuer); err == nil && u.Scheme != "" && u.Host != "" {
		connect = "; connect-src 'self' " + u.Scheme + "://" + u.Host
	}
	return "default-src 'self'" + connect + "; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'"
}

func contentTypeOf(name string) string {
	switch path.Ext(name) {
	case ".html":
		return "text/html; charset=utf-8"
	case ".js":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	}
	return "application/octet-stream"
}
