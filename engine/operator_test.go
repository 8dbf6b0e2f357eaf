package engine_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	"switchboard/packages"
	"switchboard/store"
)

// opEnv is a real SQLite store, a submitter and a dispatcher over scripted providers, under a
// fake clock: the operator and retention tests make messages reach their states the way
// production does.
type opEnv struct {
	t     *testing.T
	ctx   context.Context
	clock *enginetest.FakeClock
	store *store.Store
	pkg   *packages.Package
	sub   *engine.Submitter
	disp  *engine.Dispatcher
	n     int
}

// newOpEnv builds profile "sms" (primary, then backup) and "sms-hold" (primary alone,
// onUncertain: hold); both providers answer outcome.
func newOpEnv(t *testing.T, outcome engine.OutcomeClass) *opEnv {
	t.Helper()
	retry := packages.RetryPolicy{MaximumAttempts: 1, InitialDelaySeconds: 30, MaximumDelaySeconds: 60}
	pkg := &packages.Package{
		Providers: []*packages.Provider{{ID: "primary", Kind: "http"}, {ID: "backup", Kind: "http"}},
		SenderProfiles: []*packages.SenderProfile{
			{ID: "sms", Channel: "sms", Provider: "primary", FallbackProviders: []string{"backup"}, Sender: "+15550100",
				MaximumSegments: 3, Retry: retry, OnUncertain: "hold", DefaultExpirySeconds: 86400},
			{ID: "sms-hold", Channel: "sms", Provider: "primary", Sender: "+15550100",
				MaximumSegments: 3, Retry: retry, OnUncertain: "hold", DefaultExpirySeconds: 86400},
		},
		AccessProfiles: []*packages.AccessProfile{{ID: "app", Role: "sender", Clients: []string{"app"},
			SenderProfiles: []string{"sms", "sms-hold"}, AllowDirectContent: true, RequestsPerMinute: 60, Burst: 10}},
	}
	clock := enginetest.NewFakeClock(time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC))
	st, err := store.Open(context.Background(), store.Config{Path: filepath.Join(t.TempDir(), "op.db"),
		AuditKey: []byte("0123456789abcdef0123456789abcdef"), Clock: clock, Migrate: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	o := engine.Outcome{Class: outcome, Code: "scripted." + string(outcome)}
	if outcome == engine.OutcomeAccepted {
		o.Code = ""
	}
	provs := map[string]engine.Provider{
		"primary": enginetest.NewScriptedProvider("http", o),
		"backup":  enginetest.NewScriptedProvider("http", o),
	}
	e := &opEnv{t: t, ctx: context.Background(), clock: clock, store: st, pkg: pkg}
	e.disp = engine.NewDispatcher(engine.DispatcherConfig{Package: pkg, Store: st, Providers: provs, Clock: clock,
		Logger: slog.New(slog.DiscardHandler), Concurrency: 2, BatchSize: 100, MaxPayloadBytes: 1 << 20,
		PollInterval: time.Second, LeaseFor: time.Minute, Jitter: func() float64 { return 0.5 }})
	e.sub = engine.NewSubmitter(engine.SubmitterConfig{Package: pkg, Store: st, Clock: clock,
		PayloadRetention: 7 * 24 * time.Hour, ReceiptWindow: 7 * 24 * time.Hour})
	return e
}

// submit accepts n direct-content messages on profile and returns their ids.
func (e *opEnv) submit(profile string, n int) []string {
	e.t.Helper()
	ids := make([]string, 0, n)
	for range n {
		e.n++
		key := fmt.Sprintf("key-%d", e.n)
		res, err := e.sub.Submit(e.ctx, engine.Caller{Issuer: "i", Subject: "s", Pseudonym: "caller:x", Profile: "app", Role: "sender"},
			key, requestBody(e.t, `{"k":"`+key+`"}`), &engine.SubmitRequest{SenderProfile: profile,
				To: engine.Recipient{Phone: "+15550100123"}, Content: &engine.DirectContent{Text: "Hello."}})
		if err != nil {
			e.t.Fatalf("submit: %v", err)
		}
		ids = append(ids, res.MessageID)
	}
	return ids
}

// dispatch sends everything due, one second later.
func (e *opEnv) dispatch() {
	e.t.Helper()
	e.clock.Advance(time.Second)
	if _, err := e.disp.DispatchDue(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	e.clock.Advance(time.Second)
}

func (e *opEnv) message(id string) *engine.Message {
	e.t.Helper()
	m, err := e.store.Message(e.ctx, id)
	if err != nil {
		e.t.Fatalf("Message(%s): %v", id, err)
	}
	return m
}

func (e *opEnv) journal() int64 {
	e.t.Helper()
	rep, err := e.store.VerifyAudit(e.ctx)
	if err != nil || !rep.OK() {
		e.t.Fatalf("VerifyAudit = %+v, %v", rep, err)
	}
	return rep.Records
}

func (e *opEnv) operator(store engine.Store, batch int) *engine.Operator {
	e.t.Helper()
	op, err := engine.NewOperator(engine.OperatorConfig{Store: store, Package: e.pkg, Clock: e.clock, BatchSize: batch})
	if err != nil {
		e.t.Fatal(err)
	}
	return op
}

func TestOperatorActionsAreTransitions(t *testing.T) {
	t.Parallel()
	for _, a := range engine.Actions() {
		from, to, _, ok := a.Transition()
		if !ok || !slices.ContainsFunc(engine.Transitions(), func(tr engine.Transition) bool { return tr.From == from && tr.To == to }) {
			t.Fatalf("%s (%s -> %s) is not a row of Transitions", a, from, to)
		}
	}
	if _, _, _, ok := engine.Action("resend").Transition(); ok {
		t.Fatal("an unknown action has a transition")
	}
}

func TestOperatorPreviewThenApplyRetry(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomePermanent)
	id := e.submit("sms", 1)[0]
	e.dispatch()
	if m := e.message(id); m.Dispatch != engine.DispatchFailed || m.Provider != "backup" {
		t.Fatalf("setup: %s on %s, want failed on the fallback", m.Dispatch, m.Provider)
	}
	op := e.operator(e.store, 0)
	before, records := e.message(id), e.journal()
	c, err := op.Preview(e.ctx, engine.ActionRetry, id)
	if err != nil || c.String() != "retry "+id+": failed -> queued (generation 2)" {
		t.Fatalf("preview = %q, %v", c, err)
	}
	if after := e.message(id); after.Dispatch != before.Dispatch || !after.UpdatedAt.Equal(before.UpdatedAt) || e.journal() != records {
		t.Fatal("a preview changed the message or the journal")
	}
	m, applied, err := op.Apply(e.ctx, engine.ActionRetry, id, "operator-tool")
	if err != nil || applied != c {
		t.Fatalf("apply = %q, %v; the preview said %q", applied, err, c)
	}
	if m.Dispatch != engine.DispatchQueued || m.Generation != 2 || m.Provider != "primary" || m.FallbackIndex != 0 {
		t.Fatalf("after retry: %s generation %d on %s (fallback %d), want queued 2 on the profile's provider",
			m.Dispatch, m.Generation, m.Provider, m.FallbackIndex)
	}
	if e.journal() != records+1 {
		t.Fatal("the retry was not journaled exactly once")
	}
	var actor string
	if err := e.store.ExportAudit(e.ctx, time.Time{}, func(r store.AuditRecord) error {
		if r.Event == "message.retried" && r.MessageID == id {
			actor = r.Actor + " " + r.Outcome
		}
		return nil
	}); err != nil || actor != "operator-tool failed->queued generation 2" {
		t.Fatalf("journal record: %q, %v", actor, err)
	}
	_, _, err = op.Apply(e.ctx, engine.ActionRetry, id, "operator-tool")
	if !errors.Is(err, engine.ErrNotEligible) || !strings.Contains(err.Error(), "this message is queued") {
		t.Fatalf("a second retry: %v, want not eligible naming the state", err)
	}
	if _, err := op.Preview(e.ctx, engine.ActionRetry, "absent"); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("preview of an absent message: %v", err)
	}
}

func TestOperatorSettleAndPastExpiry(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomeMaybeSent)
	ids := e.submit("sms-hold", 2)
	e.dispatch()
	op := e.operator(e.store, 0)
	m, c, err := op.Apply(e.ctx, engine.ActionSettleSent, ids[0], "caller:operator")
	if err != nil || m.Dispatch != engine.DispatchSubmitted || m.Status() != "submitted" || c.String() != "settle "+ids[0]+": unknown -> submitted" {
		t.Fatalf("settle sent = %+v, %q, %v", m, c, err)
	}
	e.clock.Advance(48 * time.Hour) // past expiresAt (one day)
	c, err = op.Preview(e.ctx, engine.ActionSettleNotSent, ids[1])
	if err != nil || !c.PastExpiry || !strings.Contains(c.String(), "it will expire, not be sent") {
		t.Fatalf("preview past expiry = %q, %v", c, err)
	}
	if _, _, err := op.Apply(e.ctx, engine.ActionSettleNotSent, ids[1], "caller:operator"); err != nil {
		t.Fatal(err)
	}
	e.dispatch() // the expiry sweep, never a send
	if m := e.message(ids[1]); m.Dispatch != engine.DispatchExpired || m.Generation != 2 {
		t.Fatalf("settled past expiry: %s generation %d, want expired 2", m.Dispatch, m.Generation)
	}
}

// spyStore is the real store, recording how large the listings and batches of a bulk action
// are, and optionally changing a message behind the action's back before a batch.
type spyStore struct {
	engine.Store
	maxList, maxApply, applies int
	beforeApply                func()
}

func (s *spyStore) ListMessages(ctx context.Context, q engine.MessageQuery) (engine.MessagePage, error) {
	s.maxList = max(s.maxList, q.Limit)
	return s.Store.ListMessages(ctx, q)
}

func (s *spyStore) ApplyOperatorActions(ctx context.Context, a []engine.OperatorAction) ([]engine.OperatorResult, error) {
	s.maxApply = max(s.maxApply, len(a))
	s.applies++
	if s.beforeApply != nil {
		s.beforeApply()
		s.beforeApply = nil
	}
	return s.Store.ApplyOperatorActions(ctx, a)
}

func TestOperatorBulkInBoundedBatches(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomePermanent)
	old := e.submit("sms", 23)
	e.dispatch()
	cut := e.clock.Now()
	e.submit("sms", 2) // accepted after the cutoff
	e.dispatch()
	spy := &spyStore{Store: e.store}
	op := e.operator(spy, 5)
	sel := engine.Selection{Status: "failed", Before: cut}
	records := e.journal()
	p, err := op.PreviewBulk(e.ctx, engine.ActionRetry, sel, 3)
	if err != nil || p.Matched != 23 || len(p.Sample) != 3 || p.Sample[0].MessageID != old[0] {
		t.Fatalf("preview = %+v, %v", p, err)
	}
	if e.journal() != records || spy.applies != 0 {
		t.Fatal("a bulk preview changed something")
	}
	var progress []string
	r, err := op.ApplyBulk(e.ctx, engine.ActionRetry, sel, "operator-tool", func(done, total int64) {
		progress = append(progress, fmt.Sprintf("%d/%d", done, total))
	})
	if err != nil || r.Matched != 23 || r.Applied != 23 || r.Skipped != 0 || r.Batches != 5 {
		t.Fatalf("apply = %+v, %v", r, err)
	}
	if spy.maxList > 5 || spy.maxApply > 5 {
		t.Fatalf("a batch held %d listed and %d applied messages, over the batch size 5", spy.maxList, spy.maxApply)
	}
	if strings.Join(progress, " ") != "5/23 10/23 15/23 20/23 23/23" {
		t.Fatalf("progress %v", progress)
	}
	for _, id := range old {
		if m := e.message(id); m.Dispatch != engine.DispatchQueued || m.Generation != 2 {
			t.Fatalf("%s: %s generation %d", id, m.Dispatch, m.Generation)
		}
	}
	if n, _ := e.store.CountMessages(e.ctx, engine.MessageQuery{Dispatch: engine.DispatchFailed}); n != 2 {
		t.Fatalf("%d failed messages left, want the 2 accepted after the cutoff", n)
	}
	if e.journal() != records+23 {
		t.Fatal("the bulk retry was not journaled once per message")
	}
}

func TestOperatorBulkSkipsWhatMoved(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomeAccepted)
	e.submit("sms", 6)
	cut := e.clock.Advance(time.Second)
	spy := &spyStore{Store: e.store}
	// The dispatcher claims the whole queue between the first listing and its write.
	spy.beforeApply = func() {
		if _, err := e.store.ClaimPage(e.ctx, e.clock.Now(), engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute); err != nil {
			t.Error(err)
		}
	}
	op := e.operator(spy, 4)
	r, err := op.ApplyBulk(e.ctx, engine.ActionCancel, engine.Selection{Status: "queued", Before: cut}, "operator-tool", nil)
	if err != nil || r.Matched != 6 || r.Applied != 0 || r.Skipped != 4 || r.Batches != 1 {
		t.Fatalf("bulk cancel = %+v, %v; want the first batch of 4 skipped (claimed meanwhile), no second", r, err)
	}
	if _, err := op.PreviewBulk(e.ctx, engine.ActionCancel, engine.Selection{Status: "failed", Before: cut}, 1); !errors.Is(err, engine.ErrNotEligible) {
		t.Fatalf("cancel --status failed: %v, want not eligible", err)
	}
	if _, err := op.PreviewBulk(e.ctx, engine.ActionCancel, engine.Selection{Status: "lost", Before: cut}, 1); engine.CodeOf(err) != engine.CodeRequestInvalid {
		t.Fatalf("an unknown status: %v", err)
	}
}
