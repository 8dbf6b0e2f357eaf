package api

import (
	"errors"
	"net/http"

	"switchboard/engine"
)

// validKey checks an Idempotency-Key: 1-128 printable ASCII characters.
func validKey(k string) bool {
	if len(k) < 1 || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// submit is POST /v1/messages.
func (s *Server) submit(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	key := r.Header.Get("Idempotency-Key")
	if !validKey(key) {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestInvalid, "an Idempotency-Key header of 1 to 128 printable ASCII characters is required"))
		return
	}
	// The body is indexed once: the request is decoded from the index, and the engine hashes
	// the same index for the idempotency record.
	body, err := readJSON(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	req, err := decodeSubmission(body.Root())
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	res, err := s.cfg.Submitter.Submit(r.Context(), caller, key, body, &req)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if res.MessageID != "" {
		w.Header().Set("Location", "/v1/messages/"+res.MessageID)
	}
	writeRawJSON(w, http.StatusAccepted, res.Response)
}

// visibleMessage loads a message the caller may see: its submitter, or any operator.
func (s *Server) visibleMessage(r *http.Request, caller engine.Caller) (*engine.Message, error) {
	m, err := s.cfg.Store.Message(r.Context(), r.PathValue("id"))
	if err != nil {
		if errors.Is(err, engine.ErrNotFound) {
			return nil, engine.ErrNotFound
		}
		return nil, err
	}
	if !caller.MaySee(m) {
		return nil, engine.ErrNotFound
	}
	return m, nil
}

// getMessage is GET /v1/messages/{id}.
func (s *Server) getMessage(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	m, err := s.visibleMessage(r, caller)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, NewMessageView(m, caller.Role == "operator"))
}

// cancel is POST /v1/messages/{id}/cancel, for its submitter or any operator: the engine's
// cancel (engine.Operator.Cancel), refused with 409 once dispatch started or final.
func (s *Server) cancel(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	m, err := s.visibleMessage(r, caller)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if _, err := readRaw(r); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	op, err := s.operator()
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	m, err = op.Cancel(r.Context(), m, caller)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, NewMessageView(m, caller.Role == "operator"))
}
