package api

import (
	"net/http"
	"sort"
	"strings"

	"switchboard/engine"
)

// methods maps an HTTP method to its handler for one path pattern.
type methods map[string]http.HandlerFunc

// routes registers every route. Patterns carry no method so that this package, not ServeMux,
// answers 405 with a problem body and an Allow header.
func (s *Server) routes() {
	s.handle("/health", methods{http.MethodGet: s.health})
	s.handle("/ready", methods{http.MethodGet: s.ready})
	s.handle("/openapi.json", methods{http.MethodGet: s.openAPI})
	s.handle("/v1/messages", methods{http.MethodPost: s.authed([]string{"sender"}, s.submit),
		http.MethodGet: s.authed([]string{"sender", "operator"}, s.listMessages)})
	s.handle("/v1/messages/{id}", methods{http.MethodGet: s.authed(nil, s.getMessage)})
	s.handle("/v1/messages/{id}/cancel", methods{http.MethodPost: s.authed(nil, s.cancel)})
	s.handle("/v1/messages/{id}/retry", methods{http.MethodPost: s.authed([]string{"operator"}, s.retry)})
	s.handle("/v1/messages/{id}/settle", methods{http.MethodPost: s.authed([]string{"operator"}, s.settle)})
	s.handle("/v1/templates/{id}/versions/{version}/preview", methods{http.MethodPost: s.authed([]string{"sender"}, s.preview)})
	s.handle("/v1/slo", methods{http.MethodGet: s.authed([]string{"operator"}, s.slo)})
	s.handle("/v1/inbox", methods{http.MethodGet: s.authed([]string{"receiver", "operator"}, s.inbox)})
	s.operatorRoutes()
	s.handle("/v1/provider-callbacks/{provider}", methods{http.MethodPost: s.callback})
	s.handle("/v1/provider-callbacks/{provider}/{token}", methods{http.MethodPost: s.callback})
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestNotFound, "no such route"))
	})
}

// operatorRoutes registers the operator API and, when enabled, the console.
func (s *Server) operatorRoutes() {
	operator := []string{"operator"}
	s.handle("/v1/messages/{id}/audit", methods{http.MethodGet: s.authed(operator, s.messageAudit)})
	s.handle("/v1/operations", methods{http.MethodPost: s.authed(operator, s.startOperation)})
	s.handle("/v1/operations/{id}", methods{http.MethodGet: s.authed(operator, s.getOperation)})
	s.handle("/v1/figures", methods{http.MethodGet: s.authed(operator, s.figures)})
	s.handle("/v1/audit/verification", methods{http.MethodGet: s.authed(operator, s.journalVerification),
		http.MethodPost: s.authed(operator, s.startJournalVerification)})
	if s.cfg.Console.Enabled {
		s.consoleCSP = consolePolicy(s.cfg.Console.Issuer)
		s.handle("/console/", methods{http.MethodGet: s.consoleHandler()})
	}
}

func (s *Server) handle(pattern string, m methods) {
	allowed := make([]string, 0, len(m))
	for k := range m {
		allowed = append(allowed, k)
	}
	sort.Strings(allowed)
	allow := strings.Join(allowed, ", ")
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		h, ok := m[r.Method]
		if !ok && r.Method == http.MethodHead {
			h, ok = m[http.MethodGet]
		}
		if !ok {
			w.Header().Set("Allow", allow)
			// The method is the caller's text: the answer names the allowed ones instead.
			s.writeProblem(w, r, engine.NewProblem(engine.CodeMethodNotAllowed, "this route takes only "+allow))
			return
		}
		h(w, r)
	})
}
