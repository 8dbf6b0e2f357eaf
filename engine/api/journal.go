package api

import (
	"context"
	"net/http"
	"sync"
	"time"

	"switchboard/engine"
)

// GET /v1/messages/{id}/audit, and the journal's verification state (docs/api.md, "Journal").

// JournalRecordView is one journal record as an operator reads it.
type JournalRecordView struct {
	At      time.Time `json:"at"`
	Event   string    `json:"event"`
	Actor   string    `json:"actor"`
	Outcome string    `json:"outcome"`
	Writer  string    `json:"writer"`
	Seq     int64     `json:"seq"`
}

// MessageJournalView is the answer of GET /v1/messages/{id}/audit.
type MessageJournalView struct {
	MessageID string              `json:"messageId"`
	Records   []JournalRecordView `json:"records"`
}

// messageAudit is GET /v1/messages/{id}/audit, for operators: the message's records, oldest
// first (at most engine.MaxJournalRecords). An unknown message is 404 message.not-visible.
func (s *Server) messageAudit(w http.ResponseWriter, r *http.Request, caller engine.Caller) {
	m, err := s.visibleMessage(r, caller)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if s.cfg.Journal == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestNotFound, "this server has no journal reader"))
		return
	}
	recs, err := s.cfg.Journal.MessageJournal(r.Context(), m.ID, engine.MaxJournalRecords)
	if err != nil {
		s.writeProblem(w, r, &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "the journal cannot be read now", Err: err})
		return
	}
	out := MessageJournalView{MessageID: m.ID, Records: make([]JournalRecordView, 0, len(recs))}
	for _, rec := range recs {
		out.Records = append(out.Records, JournalRecordView{At: rec.At, Event: rec.Event, Actor: rec.Actor,
			Outcome: rec.Outcome, Writer: rec.Writer, Seq: rec.Seq})
	}
	writeJSON(w, http.StatusOK, out)
}

// maxShownBreaks bounds the breaks a verification state lists.
const maxShownBreaks = 20

// JournalVerification is the answer of GET and POST /v1/audit/verification.
type JournalVerification struct {
	// State is none (never run by this instance), running, done or failed (it could not read
	// the journal; Error says so).
	State      string             `json:"state"`
	StartedAt  *time.Time         `json:"startedAt,omitempty"`
	FinishedAt *time.Time         `json:"finishedAt,omitempty"`
	Writers    int                `json:"writers"`
	Records    int64              `json:"records"`
	Intact     *bool              `json:"intact,omitempty"`
	Breaks     []JournalBreakView `json:"breaks"`
	Error      string             `json:"error,omitempty"`
	Links      map[string]string  `json:"links"`
}

// JournalBreakView is the first failing record of one chain.
type JournalBreakView struct {
	Writer string `json:"writer"`
	Seq    int64  `json:"seq"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// JournalCheck is a verification function (store.VerifyAudit behind it).
type JournalCheck func(ctx context.Context) (engine.JournalReport, error)

// journalState runs one verification at a time in the background and keeps the last result.
// It is this instance's: the result is a reading of the shared table that any instance can
// take again, so it is kept in memory only (docs/api.md says why).
type journalState struct {
	mu    sync.Mutex
	clock engine.Clock
	check JournalCheck
	last  JournalVerification
}

func newJournalState(clock engine.Clock, check JournalCheck) *journalState {
	return &journalState{clock: clock, check: check, last: JournalVerification{State: "none", Breaks: []JournalBreakView{}}}
}

// snapshot returns the last state.
func (j *journalState) snapshot() JournalVerification {
	j.mu.Lock()
	defer j.mu.Unlock()
	v := j.last
	v.Breaks = append([]JournalBreakView{}, j.last.Breaks...)
	v.Links = map[string]string{"self": "/v1/audit/verification"}
	return v
}

// start begins a verification unless one is running, and returns the state.
func (j *journalState) start() JournalVerification {
	j.mu.Lock()
	if j.last.State != "running" {
		now := j.clock.Now()
		j.last = JournalVerification{State: "running", StartedAt: &now, Breaks: []JournalBreakView{}}
		go j.run(now)
	}
	j.mu.Unlock()
	return j.snapshot()
}

func (j *journalState) run(started time.Time) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	rep, err := j.check(ctx)
	done := j.clock.Now()
	v := JournalVerification{State: "done", StartedAt: &started, FinishedAt: &done, Writers: rep.Writers,
		Records: rep.Records, Breaks: []JournalBreakView{}}
	if err != nil {
		v.State, v.Error = "failed", "the journal could not be read to the end"
	} else {
		intact := len(rep.Breaks) == 0
		v.Intact = &intact
		for i, b := range rep.Breaks {
			if i == maxShownBreaks {
				break
			}
			v.Breaks = append(v.Breaks, JournalBreakView{Writer: b.Writer, Seq: b.Seq, Kind: b.Kind, Detail: b.Detail})
		}
	}
	j.mu.Lock()
	j.last = v
	j.mu.Unlock()
}

// StartJournalVerification starts a verification of the journal unless one is running, as
// POST /v1/audit/verification does (serve's daily check calls it). It does nothing on a
// server that cannot verify.
func (s *Server) StartJournalVerification() {
	if s.journal != nil {
		s.journal.start()
	}
}

// journalVerification is GET /v1/audit/verification.
func (s *Server) journalVerification(w http.ResponseWriter, r *http.Request, _ engine.Caller) {
	if s.journal == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestNotFound, "this server cannot verify the journal"))
		return
	}
	writeJSON(w, http.StatusOK, s.journal.snapshot())
}

// startJournalVerification is POST /v1/audit/verification (an empty body or {}): it starts a
// verification unless one runs, and answers 202 with the state.
func (s *Server) startJournalVerification(w http.ResponseWriter, r *http.Request, _ engine.Caller) {
	if s.journal == nil {
		s.writeProblem(w, r, engine.NewProblem(engine.CodeRequestNotFound, "this server cannot verify the journal"))
		return
	}
	if err := readEmptyObject(r); err != nil {
		s.writeProblem(w, r, err)
		return
	}
	w.Header().Set("Location", "/v1/audit/verification")
	writeJSON(w, http.StatusAccepted, s.journal.start())
}
