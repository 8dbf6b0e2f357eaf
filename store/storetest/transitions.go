package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

// The state table walked on the store: every move engine.Transitions lists is applied through
// the store write it names and lands in its To state with its record, and every other move any
// dispatch-changing write could make is refused, leaving the message and the journal as they
// were.

func transitionTests() []namedTest {
	return []namedTest{
		{"EveryWriteIsATransition", testWritesAreTransitions},
		{"EveryListedMoveApplies", testListedMoves},
		{"EveryOtherMoveRefused", testUnlistedMoves},
		{"EveryReportStepApplies", testReportSteps},
	}
}

// AuditExporter is implemented by stores whose journal can be read back in order.
type AuditExporter interface {
	ExportAudit(ctx context.Context, since time.Time, fn func(store.AuditRecord) error) error
}

// errNotTaken is the refusal of a write that selects its messages itself (a claim, the expiry
// sweep): it left the message out.
var errNotTaken = errors.New("the write left the message out")

// write applies one dispatch-changing store write to message id, which inState put in its
// state (lease is what inState returned), aiming at dispatch state to. It returns the journal
// event the write records ("" for a claim, whose record is its in-progress attempt row) and the
// store's refusal, if any.
type write func(b *bundle, id string, lease engine.LeaseRef, to engine.Dispatch) (event string, err error)

// writes are the store writes that change a message's dispatch state, by the engine.StoreWrite
// that names them in engine.Transitions. A transition naming a write missing here fails
// EveryListedMoveApplies; a write here that no transition names fails EveryWriteIsATransition.
func writes() map[engine.StoreWrite]write {
	return map[engine.StoreWrite]write{
		engine.WriteClaimPage: func(b *bundle, id string, _ engine.LeaseRef, _ engine.Dispatch) (string, error) {
			// Later than any queued message's first due time (an hour), before its expiry.
			p, err := b.store.ClaimPage(b.ctx, b.clock.Now().Add(2*time.Hour), engine.PageLimits{MaxEntries: 100, MaxBytes: 1 << 30}, time.Minute)
			if err != nil {
				return "", err
			}
			for _, c := range p.Claims {
				if c.Message.ID == id {
					return "", nil
				}
			}
			return "", errNotTaken
		},
		engine.WriteExpireDue: func(b *bundle, id string, _ engine.LeaseRef, _ engine.Dispatch) (string, error) {
			before := b.message(id).Dispatch
			if _, err := b.store.ExpireDue(b.ctx, b.clock.Now().Add(48*time.Hour), 100); err != nil {
				return "", err
			}
			if b.message(id).Dispatch == before {
				return "", errNotTaken
			}
			return "message.expired", nil
		},
		engine.WriteFinish: func(b *bundle, id string, lease engine.LeaseRef, to engine.Dispatch) (string, error) {
			if lease.Token == "" {
				lease = engine.LeaseRef{MessageID: id, Token: "never-claimed"}
			}
			now := b.clock.Now()
			return "attempt.finished", b.store.Finish(b.ctx, engine.Finish{
				Lease: lease, Attempt: attemptFor(to), Code: "code-" + string(to), Dispatch: to, Report: engine.ReportNone,
				NextAttemptAt: now.Add(time.Minute), ProviderAttempts: 1, Provider: "sms-gateway", FinishedAt: now,
				Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: id, At: now},
			})
		},
		engine.WriteOperatorAction: func(b *bundle, id string, _ engine.LeaseRef, to engine.Dispatch) (string, error) {
			from := b.message(id).Dispatch
			a, ok := actionTo(from, to)
			if !ok {
				return "", fmt.Errorf("no operator action moves a %s message to %s", from, to)
			}
			return a.AuditEvent(), b.apply(a, id, "").Err
		},
	}
}

// actionTo is the operator action that moves a message from from to to.
func actionTo(from, to engine.Dispatch) (engine.Action, bool) {
	for _, a := range engine.Actions() {
		if f, t, _, _ := a.Transition(); f == from && t == to {
			return a, true
		}
	}
	return "", false
}

// attemptFor is how Finish closes an attempt that leads to dispatch state to.
func attemptFor(to engine.Dispatch) engine.AttemptOutcome {
	switch to {
	case engine.DispatchSubmitted:
		return engine.AttemptAccepted
	case engine.DispatchQueued:
		return engine.AttemptTransient
	case engine.DispatchUnknown:
		return engine.AttemptMaybeSent
	case engine.DispatchExpired:
		return engine.AttemptExpired
	}
	return engine.AttemptPermanent
}

func testWritesAreTransitions(t *testing.T, _ *bundle) {
	named := map[engine.StoreWrite]bool{}
	for _, tr := range engine.Transitions() {
		named[tr.Write] = true
	}
	for w := range writes() {
		if !named[w] {
			t.Errorf("the store write %s changes dispatch states, but no row of engine.Transitions names it", w)
		}
	}
	for w := range named {
		if _, ok := writes()[w]; !ok {
			t.Errorf("engine.Transitions names the store write %s, which this suite cannot apply", w)
		}
	}
}

// testListedMoves applies every transition, each on a store of its own, and checks where the
// message lands and what was recorded.
func testListedMoves(t *testing.T, b *bundle) {
	for _, tr := range engine.Transitions() {
		t.Run(fmt.Sprintf("%s-%s", tr.From, tr.To), func(t *testing.T) {
			t.Parallel()
			w, ok := writes()[tr.Write]
			if !ok {
				t.Fatalf("%s -> %s (%s): no way to apply the store write %s", tr.From, tr.To, tr.By, tr.Write)
			}
			c := b.h.setup(t)
			id := "m-" + string(tr.From)
			lease := c.inState(id, tr.From)
			records, journal, attempts := c.auditRecords(), c.journal(id), len(c.message(id).Attempts)
			event, err := w(c, id, lease, tr.To)
			if err != nil {
				t.Fatalf("%s -> %s through %s: %v", tr.From, tr.To, tr.Write, err)
			}
			m := c.message(id)
			if m.Dispatch != tr.To {
				t.Fatalf("%s -> %s through %s: the message is %s", tr.From, tr.To, tr.Write, m.Dispatch)
			}
			// The final time is set exactly in the final states: retention, the figures of
			// each state and the listings by status all read the two as one.
			if (m.FinalAt != nil) != m.Dispatch.Final() {
				t.Fatalf("%s -> %s through %s: final time %v in state %s", tr.From, tr.To, tr.Write, m.FinalAt, m.Dispatch)
			}
			if event == "" { // a claim: its record is the attempt row it opens, not a journal record
				if len(m.Attempts) != attempts+1 || m.Attempts[len(m.Attempts)-1].Outcome != engine.AttemptInProgress {
					t.Fatalf("the claim opened no in-progress attempt: %+v", m.Attempts)
				}
				if after := c.auditRecords(); after != records {
					t.Fatalf("the claim wrote %d journal records, want none", after-records)
				}
				return
			}
			if after := c.auditRecords(); records >= 0 && after != records+1 {
				t.Fatalf("%s -> %s through %s wrote %d journal records, want 1", tr.From, tr.To, tr.Write, after-records)
			}
			c.wantOneRecord(t, fmt.Sprintf("%s -> %s through %s", tr.From, tr.To, tr.Write), id, journal, event)
		})
	}
}

// try is one move a write could make: the write, the state it aims at, and for an operator
// action, which one.
type try struct {
	write  engine.StoreWrite
	to     engine.Dispatch
	action engine.Action
}

// tries lists every move a dispatch-changing write could make: Finish towards every state, a
// claim towards sending, the sweep towards expired, each operator action towards its own state.
func tries() []try {
	out := []try{{write: engine.WriteClaimPage, to: engine.DispatchSending}, {write: engine.WriteExpireDue, to: engine.DispatchExpired}}
	for _, to := range engine.DispatchStates() {
		out = append(out, try{write: engine.WriteFinish, to: to})
	}
	for _, a := range engine.Actions() {
		_, to, _, _ := a.Transition()
		out = append(out, try{write: engine.WriteOperatorAction, to: to, action: a})
	}
	return out
}

// listed reports whether engine.Transitions lists the try's move from from, as applied by its
// write (and, for an operator action, whether from is the action's own from-state).
func (x try) listed(from engine.Dispatch) bool {
	if x.action != "" {
		if f, _, _, _ := x.action.Transition(); f != from {
			return false
		}
	}
	for _, tr := range engine.Transitions() {
		if tr.From == from && tr.To == x.to && tr.Write == x.write {
			return true
		}
	}
	return false
}

// testUnlistedMoves makes, on a message in each dispatch state, every try that is not a row of
// engine.Transitions: a move the table does not list, or a write applied outside its
// from-state. Each must be refused, changing neither the message nor the journal. One store
// per state.
func testUnlistedMoves(t *testing.T, b *bundle) {
	for _, from := range engine.DispatchStates() {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			c := b.h.setup(t)
			n := 0
			for _, x := range tries() {
				if x.listed(from) {
					continue
				}
				n++
				what := fmt.Sprintf("%s of a %s message towards %s", x.write, from, x.to)
				if x.action != "" {
					what = fmt.Sprintf("%s (%s) of a %s message", x.write, x.action, from)
				}
				id := fmt.Sprintf("m-%d", n)
				lease := c.inState(id, from)
				records := c.auditRecords()
				var err error
				if x.action != "" {
					err = c.apply(x.action, id, "").Err
				} else {
					_, err = writes()[x.write](c, id, lease, x.to)
				}
				switch {
				case err == nil:
					t.Fatalf("%s: applied, but the table lists no such move", what)
				case x.action != "":
					wantErr(t, what, err, x.action.Refusal(from))
				case x.write == engine.WriteFinish && !engine.Allowed(engine.DispatchSending, x.to):
					// No attempt ever leads there: refused whatever the lease, before the guard.
					if errors.Is(err, engine.ErrLeaseLost) {
						t.Fatalf("%s: refused as a lost lease; the move itself must be refused", what)
					}
				case x.write == engine.WriteFinish:
					wantErr(t, what, err, engine.ErrLeaseLost)
				case x.write == engine.WriteClaimPage || x.write == engine.WriteExpireDue:
					wantErr(t, what, err, errNotTaken)
				}
				if got := c.message(id).Dispatch; got != from {
					t.Fatalf("%s: refused, yet the message is now %s", what, got)
				}
				if after := c.auditRecords(); after != records {
					t.Fatalf("%s: refused, yet journaled", what)
				}
			}
			if n == 0 {
				t.Fatalf("no move was tried on a %s message", from)
			}
		})
	}
}

// journal counts the journal records about message id by event, or is nil when the store
// cannot export its journal.
func (b *bundle) journal(id string) map[string]int {
	b.t.Helper()
	x, ok := b.store.(AuditExporter)
	if !ok {
		return nil
	}
	n := map[string]int{}
	if err := x.ExportAudit(b.ctx, time.Time{}, func(r store.AuditRecord) error {
		if r.MessageID == id {
			n[r.Event]++
		}
		return nil
	}); err != nil {
		b.t.Fatalf("ExportAudit: %v", err)
	}
	return n
}

// wantOneRecord fails the test unless the journal about message id grew from before by exactly
// one record of event.
func (b *bundle) wantOneRecord(t *testing.T, what, id string, before map[string]int, event string) {
	t.Helper()
	if before == nil {
		return
	}
	before[event]++
	if after := b.journal(id); !maps.Equal(after, before) {
		t.Fatalf("%s: journal about the message %v, want %v (one %s more)", what, after, before, event)
	}
}

// testReportSteps walks the report's moves the same way: a receipt towards each report a
// receipt can bring, on a message holding each report. The moves engine.ReportSteps lists are
// applied with one journal record; every other is stale, changing neither the message nor the
// journal.
func testReportSteps(t *testing.T, b *bundle) {
	n := 0
	for _, from := range engine.ReportStates() {
		for _, to := range engine.ReportStates() {
			if !engine.Receivable(to) {
				continue // refused before the store: RefusesWhatTheEngineWouldNotAdmit
			}
			n++
			id, ref := fmt.Sprintf("m-%d", n), fmt.Sprintf("ref-%d", n)
			b.withReport(id, ref, from)
			records, journal := b.auditRecords(), b.journal(id)
			tally := b.receipts("sms-gateway", engine.Receipt{ProviderReference: ref, Report: to})
			m := b.message(id)
			if slices.Contains(engine.ReportSteps(), engine.ReportStep{From: from, To: to}) {
				if tally != (engine.ReceiptTally{Applied: 1}) || m.Report != to {
					t.Fatalf("%s -> %s: tally %+v, report %s", from, to, tally, m.Report)
				}
				if after := b.auditRecords(); records >= 0 && after != records+1 {
					t.Fatalf("%s -> %s wrote %d journal records, want 1", from, to, after-records)
				}
				b.wantOneRecord(t, fmt.Sprintf("%s -> %s", from, to), id, journal, "receipt.applied")
				continue
			}
			if tally != (engine.ReceiptTally{Stale: 1}) || m.Report != from {
				t.Fatalf("%s -> %s is no step, yet: tally %+v, report %s", from, to, tally, m.Report)
			}
			if after := b.auditRecords(); after != records {
				t.Fatalf("%s -> %s is no step, yet it was journaled", from, to)
			}
		}
	}
}

// withReport makes message id submitted with provider reference ref and report r, through a
// Finish and, for reports that receipts bring, a receipt.
func (b *bundle) withReport(id, ref string, r engine.Report) {
	b.t.Helper()
	b.accept(id)
	b.clock.Advance(time.Second)
	c := b.claimOne(id)
	if r == engine.ReportUnavailable {
		b.mustFinish(c, engine.AttemptAccepted, engine.DispatchSubmitted, r, ref)
		return
	}
	b.mustFinish(c, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportNone, ref)
	if r != engine.ReportNone {
		if tally := b.receipts("sms-gateway", engine.Receipt{ProviderReference: ref, Report: r}); tally.Applied != 1 {
			b.t.Fatalf("receipt %s for %s: %+v", r, id, tally)
		}
	}
	if got := b.message(id).Report; got != r {
		b.t.Fatalf("%s reports %s, want %s", id, got, r)
	}
}
