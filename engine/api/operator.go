package api

import (
	"bytes"
	"net/http"

	"switchboard/engine"
	"switchboard/packages/jsonread"
)

// The operator actions of SPEC section 6 over HTTP, for the operator role: applied at once (an
// API client previews by reading the message view first), journaled with the operator's
// pseudonym, under the same rules as the command line. A message in another state is refused
// with 409 message.not-eligible.

// retry is POST /v1/messages/{id}/retry: failed → queued, new generation. The body is empty
// or an empty JSON object.
func (s *Server) retry(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	if err := readEmptyObject(r); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	s.operate(w, r, caller, engine.ActionRetry)
}

// readEmptyObject reads the body of a POST that takes no members: empty, or {}.
func readEmptyObject(r *http.Request) error {
	body, err := readRaw(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) > 0 {
		doc, err := readDoc(body)
		if err != nil {
			return err
		}
		return members(doc.Root(), "", func(name, _ jsonread.Value) error { return unknownMember("", name) })
	}
	return nil
}

// settle is POST /v1/messages/{id}/settle with {"outcome": "sent"|"not-sent"}: unknown →
// submitted, or unknown → queued with a new generation.
func (s *Server) settle(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	body, err := readJSON(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	var outcome string
	err = members(body.Root(), "", func(name, val jsonread.Value) error {
		if string(name.Bytes()) == "outcome" {
			return stringMember("outcome", val, &outcome)
		}
		return unknownMember("", name)
	})
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	action, err := engine.SettleAction(outcome)
	if err != nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeUnprocessable, "outcome must be sent or not-sent"))
		return
	}
	s.operate(w, r, caller, action)
}

// operator is the engine's operator over the server's store: every change the API makes to a
// message goes through it.
func (s *Server) operator() (*engine.Operator, error) {
	return engine.NewOperator(engine.OperatorConfig{Store: s.cfg.Store, Package: s.cfg.Package, Clock: s.cfg.Clock})
}

// operate applies action to the path's message and answers its view.
func (s *Server) operate(w http.ResponseWriter, r *http.Request, caller engine.Caller, action engine.Action) {
	op, err := s.operator()
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	m, _, err := op.Apply(r.Context(), action, r.PathValue("id"), caller.Pseudonym)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, NewMessageView(m, caller.Role == "operator"))
}
