package api

import (
	_ "embed"
	"net/http"

	"switchboard/engine"
)

//go:embed openapi.json
var openAPIDocument []byte

// health is GET /health: 200 while the process runs.
func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// ready is GET /ready: 200 when the database is migrated and the package loaded.
func (s *Server) ready(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Package == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeServiceUnavailable, "the package is not loaded"))
		return
	}
	if s.cfg.Ready != nil {
		if err := s.cfg.Ready(r.Context()); err != nil {
			s.writeProblem(w, r, &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "the database is not ready", Err: err})
			return
		}
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "packageDigest": s.cfg.Package.Digest})
}

// openAPI is GET /openapi.json.
func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) {
	writeRawJSON(w, http.StatusOK, openAPIDocument)
}
