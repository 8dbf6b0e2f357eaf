package api

import (
	"net/http"

	"switchboard/engine"
)

// SLOSource gives the dispatcher's own figures and settings for GET /v1/slo.
type SLOSource struct {
	Figures         func() engine.PageFigures
	BatchSize       int
	MaxPayloadBytes int64
	Concurrency     int
}

// outbox is the outbox member of GET /v1/slo (docs/api.md, "Queue figures").
type outbox struct {
	QueuedEntries            int64 `json:"queuedEntries"`
	QueuedBytes              int64 `json:"queuedBytes"`
	ClaimedEntries           int64 `json:"claimedEntries"`
	ClaimedBytes             int64 `json:"claimedBytes"`
	LastPageEntries          int   `json:"lastPageEntries"`
	LastPageBytes            int64 `json:"lastPageBytes"`
	OldestDueAgeMs           int64 `json:"oldestDueAgeMs"`
	OversizedDueEntries      int64 `json:"oversizedDueEntries"`
	OversizedSkipsTotal      int64 `json:"oversizedSkipsTotal"`
	ByteBudgetDeferralsTotal int64 `json:"byteBudgetDeferralsTotal"`
	BatchSize                int   `json:"batchSize"`
	MaxPayloadBytes          int64 `json:"maxPayloadBytes"`
	Concurrency              int   `json:"concurrency"`
}

// slo is GET /v1/slo, for operators: queue and dispatch figures from metadata only, with no
// recipient, peer or protocol in them.
func (s *Server) slo(w http.ResponseWriter, r *http.Request, _ engine.Caller) {
	st, err := s.cfg.Store.Stats(r.Context(), s.cfg.Clock.Now())
	if err != nil {
		s.writeProblem(w, r, &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "queue figures are unavailable now", Err: err})
		return
	}
	src := s.cfg.SLO
	var fig engine.PageFigures
	if src.Figures != nil {
		fig = src.Figures()
	}
	dispatch := map[string]int64{}
	for _, d := range engine.DispatchStates() {
		dispatch[string(d)] = st.Dispatch[d]
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"outbox": outbox{
			QueuedEntries: st.QueuedEntries, QueuedBytes: st.QueuedBytes,
			ClaimedEntries: st.ClaimedEntries, ClaimedBytes: st.ClaimedBytes,
			LastPageEntries: fig.LastPageEntries, LastPageBytes: fig.LastPageBytes,
			OldestDueAgeMs: st.OldestDueAge.Milliseconds(), OversizedDueEntries: st.OversizedDueEntries,
			OversizedSkipsTotal: fig.OversizedSkipsTotal, ByteBudgetDeferralsTotal: fig.ByteBudgetDeferralsTotal,
			BatchSize: src.BatchSize, MaxPayloadBytes: src.MaxPayloadBytes, Concurrency: src.Concurrency,
		},
		"dispatch": dispatch,
	})
}
