package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/store"
)

// TestOperatorCancel is the API's cancel: for the submitter or an operator only, journaled with
// the caller's pseudonym, and refused, with nothing changed, once dispatch started or when final;
// the command line's Apply(cancel) goes through the same store cancel.
func TestOperatorCancel(t *testing.T) {
	t.Parallel()
	e := newOpEnv(t, engine.OutcomeMaybeSent)
	op := e.operator(e.store, 0)
	submitter := engine.Caller{Pseudonym: "caller:x", Role: "sender"}
	unknown := e.submit("sms-hold", 1)[0]
	e.dispatch() // maybe-sent under hold
	if m := e.message(unknown); m.Dispatch != engine.DispatchUnknown {
		t.Fatalf("setup: %s is %s", unknown, m.Dispatch)
	}
	ids := e.submit("sms-hold", 2)
	fresh, queued := ids[0], ids[1]
	if _, _, err := op.Apply(e.ctx, engine.ActionCancel, queued, "operator-tool"); err != nil { // the command line's
		t.Fatal(err)
	}

	records := e.journal()
	if _, err := op.Cancel(e.ctx, e.message(fresh), engine.Caller{Pseudonym: "caller:someone-else", Role: "sender"}); !errors.Is(err, engine.ErrNotFound) {
		t.Fatalf("another sender's cancel: %v, want not visible", err)
	}
	m, err := op.Cancel(e.ctx, e.message(fresh), submitter)
	if err != nil || m.Dispatch != engine.DispatchCancelled || m.FinalAt == nil {
		t.Fatalf("the submitter's cancel = %+v, %v", m, err)
	}
	if e.journal() != records+1 {
		t.Fatal("the cancel was not journaled exactly once")
	}
	var actor string
	if err := e.store.ExportAudit(e.ctx, time.Time{}, func(r store.AuditRecord) error {
		if r.Event == "message.cancelled" && r.MessageID == fresh {
			actor = r.Actor
		}
		return nil
	}); err != nil || actor != submitter.Pseudonym {
		t.Fatalf("journal actor %q, %v; want the caller's pseudonym", actor, err)
	}

	for _, c := range []struct {
		id   string
		by   engine.Caller
		want error
	}{
		{fresh, submitter, engine.ErrTerminal},
		{queued, engine.Caller{Pseudonym: "caller:op", Role: "operator"}, engine.ErrTerminal},
		{unknown, engine.Caller{Pseudonym: "caller:op", Role: "operator"}, engine.ErrDispatchStarted},
	} {
		before, records := e.message(c.id), e.journal()
		if _, err := op.Cancel(e.ctx, before, c.by); !errors.Is(err, c.want) {
			t.Fatalf("cancel of a %s message: %v, want %v", before.Dispatch, err, c.want)
		}
		if after := e.message(c.id); after.Dispatch != before.Dispatch || e.journal() != records {
			t.Fatalf("a refused cancel changed %s from %s to %s, or was journaled", c.id, before.Dispatch, after.Dispatch)
		}
	}
	// The command line's cancel previews first: a message not queued is not eligible.
	if _, _, err := op.Apply(e.ctx, engine.ActionCancel, unknown, "operator-tool"); !errors.Is(err, engine.ErrNotEligible) {
		t.Fatalf("Apply(cancel) of an unknown message: %v, want not eligible", err)
	}
	// A message claimed after the caller read it: the store decides on the message as it stands.
	late := e.submit("sms-hold", 1)[0]
	read := e.message(late)
	if _, err := e.store.ClaimPage(context.Background(), e.clock.Now(), engine.PageLimits{MaxEntries: 10, MaxBytes: 1 << 20}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := op.Cancel(e.ctx, read, submitter); !errors.Is(err, engine.ErrDispatchStarted) {
		t.Fatalf("cancel of a message claimed since it was read: %v, want dispatch started", err)
	}
}
