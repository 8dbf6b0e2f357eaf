package api

import (
	"net/http"
	"time"

	"switchboard/engine"
)

// GET /v1/figures (docs/api.md, "Figures"): this instance's counts of the last minutes in
// fixed buckets, from which the console draws its rate charts. Metadata only: counts by
// provider id and outcome class.

// FiguresView is the answer of GET /v1/figures.
type FiguresView struct {
	BucketSeconds int       `json:"bucketSeconds"`
	Start         time.Time `json:"start"`
	End           time.Time `json:"end"`
	// Accepted counts submissions accepted, per bucket, oldest first.
	Accepted []int64 `json:"accepted"`
	// Attempts counts finished attempts per provider and outcome class (accepted, transient,
	// permanent, maybe-sent), per bucket, oldest first; every provider of the package is listed.
	Attempts map[string]map[string][]int64 `json:"attempts"`
}

var outcomeClasses = []engine.OutcomeClass{engine.OutcomeAccepted, engine.OutcomeTransient, engine.OutcomePermanent, engine.OutcomeMaybeSent}

// figures is GET /v1/figures, for operators.
func (s *Server) figures(w http.ResponseWriter, r *http.Request, _ engine.Caller) {
	if s.cfg.Figures == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestNotFound, "this server keeps no figures"))
		return
	}
	snap := s.cfg.Figures.Snapshot()
	out := FiguresView{BucketSeconds: int(snap.Bucket / time.Second), Start: snap.Start, End: snap.End,
		Accepted: snap.Accepted, Attempts: map[string]map[string][]int64{}}
	zero := make([]int64, len(snap.Accepted))
	if s.cfg.Package != nil {
		for _, p := range s.cfg.Package.Providers {
			byClass := map[string][]int64{}
			for _, c := range outcomeClasses {
				series := snap.Attempts[p.ID][c]
				if series == nil {
					series = zero
				}
				byClass[string(c)] = series
			}
			out.Attempts[p.ID] = byClass
		}
	}
	writeJSON(w, http.StatusOK, out)
}
