package api

import (
	"net/http"
	"time"

	"switchboard/engine"
	"switchboard/packages/jsonread"
)

// POST /v1/operations and GET /v1/operations/{id} (docs/api.md, "Bulk operations"): a bulk
// retry, cancel or settle, previewed with apply false and started with apply true, then
// followed to its end. The batches are the command line's (engine.Operator.ApplyBatch).

// operationSample is how many message ids a preview names.
const operationSample = 20

// OperationRequest is the body of POST /v1/operations.
type OperationRequest struct {
	Action  string          `json:"action"`
	Outcome string          `json:"outcome,omitempty"`
	Filter  OperationFilter `json:"filter"`
	Apply   bool            `json:"apply"`
}

// OperationFilter selects the messages of an operation.
type OperationFilter struct {
	Status         string     `json:"status"`
	SenderProfile  string     `json:"senderProfile,omitempty"`
	AcceptedBefore *time.Time `json:"acceptedBefore"`
}

// OperationPreview is the answer of POST /v1/operations with apply false.
type OperationPreview struct {
	Count  int64    `json:"count"`
	Sample []string `json:"sample"`
}

// OperationStarted is the answer of POST /v1/operations with apply true.
type OperationStarted struct {
	ID    string            `json:"id"`
	Links map[string]string `json:"links"`
}

// OperationView is the answer of GET /v1/operations/{id}.
type OperationView struct {
	ID         string            `json:"id"`
	Action     string            `json:"action"`
	Outcome    string            `json:"outcome,omitempty"`
	Filter     OperationFilter   `json:"filter"`
	State      string            `json:"state"`
	Total      int64             `json:"total"`
	Done       int64             `json:"done"`
	Failed     int64             `json:"failed"`
	Error      string            `json:"error,omitempty"`
	CreatedAt  time.Time         `json:"createdAt"`
	UpdatedAt  time.Time         `json:"updatedAt"`
	FinishedAt *time.Time        `json:"finishedAt,omitempty"`
	Links      map[string]string `json:"links"`
}

func operationLinks(id string) map[string]string {
	return map[string]string{"self": "/v1/operations/" + id}
}

// NewOperationView builds the view of an operation.
func NewOperationView(op *engine.Operation) OperationView {
	before := op.Selection.Before
	v := OperationView{
		ID: op.ID, Action: op.Action.Verb(), State: string(op.State),
		Filter: OperationFilter{Status: op.Selection.Status, SenderProfile: op.Selection.SenderProfile, AcceptedBefore: &before},
		Total:  op.Total, Done: op.Done, Failed: op.Failed, Error: op.Error,
		CreatedAt: op.CreatedAt, UpdatedAt: op.UpdatedAt, FinishedAt: op.FinishedAt, Links: operationLinks(op.ID),
	}
	switch op.Action {
	case engine.ActionSettleSent:
		v.Outcome = "sent"
	case engine.ActionSettleNotSent:
		v.Outcome = "not-sent"
	}
	return v
}

// decodeOperationRequest reads the body of POST /v1/operations, refusing unknown members.
func decodeOperationRequest(root jsonread.Value) (*OperationRequest, error) {
	req := &OperationRequest{}
	err := members(root, "", func(name, val jsonread.Value) error {
		switch string(name.Bytes()) {
		case "action":
			return stringMember("action", val, &req.Action)
		case "outcome":
			return stringMember("outcome", val, &req.Outcome)
		case "apply":
			return boolMember("apply", val, &req.Apply)
		case "filter":
			return members(val, "filter", func(name, val jsonread.Value) error {
				switch string(name.Bytes()) {
				case "status":
					return stringMember("filter.status", val, &req.Filter.Status)
				case "senderProfile":
					return stringMember("filter.senderProfile", val, &req.Filter.SenderProfile)
				case "acceptedBefore":
					return timeMember("filter.acceptedBefore", val, &req.Filter.AcceptedBefore)
				}
				return unknownMember("filter", name)
			})
		}
		return unknownMember("", name)
	})
	return req, err
}

// operationAction maps the request's action and outcome to the engine's action.
func operationAction(req *OperationRequest) (engine.Action, error) {
	switch req.Action {
	case "retry", "cancel":
		if req.Outcome != "" {
			return "", engine.NewProblem(engine.CodeUnprocessable, "outcome applies to settle only")
		}
		return engine.Action(req.Action), nil
	case "settle":
		a, err := engine.SettleAction(req.Outcome)
		if err != nil {
			return "", engine.NewProblem(engine.CodeUnprocessable, "settle needs outcome sent or not-sent")
		}
		return a, nil
	}
	return "", engine.NewProblem(engine.CodeUnprocessable, "action must be retry, cancel or settle")
}

// startOperation is POST /v1/operations.
func (s *Server) startOperation(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	if s.cfg.Operations == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestNotFound, "this server runs no bulk operations"))
		return
	}
	body, err := readJSON(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	req, err := decodeOperationRequest(body.Root())
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	action, err := operationAction(req)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if req.Filter.Status == "" || req.Filter.AcceptedBefore == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestInvalid, "filter needs status and acceptedBefore"))
		return
	}
	sel := engine.Selection{Status: req.Filter.Status, SenderProfile: req.Filter.SenderProfile, Before: *req.Filter.AcceptedBefore}
	if !req.Apply {
		p, err := s.cfg.Operations.Preview(r.Context(), action, sel, operationSample)
		if err != nil {
			s.writeProblem(w, r, err)
			return
		}
		out := OperationPreview{Count: p.Matched, Sample: make([]string, 0, len(p.Sample))}
		for _, c := range p.Sample {
			out.Sample = append(out.Sample, c.MessageID)
		}
		writeJSON(w, http.StatusOK, out)
		return
	}
	op, err := s.cfg.Operations.Start(r.Context(), action, sel, caller.Pseudonym)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/operations/"+op.ID)
	writeJSON(w, http.StatusAccepted, OperationStarted{ID: op.ID, Links: operationLinks(op.ID)})
}

// getOperation is GET /v1/operations/{id}.
func (s *Server) getOperation(w http.ResponseWriter, r *http.Request, _ engine.Caller) {
	if s.cfg.Operations == nil {
		s.writeProblem(w, r, engine.ErrOperationNotFound)
		return
	}
	op, err := s.cfg.Operations.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, NewOperationView(op))
}
