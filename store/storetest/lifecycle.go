package storetest

import (
	"testing"
	"time"

	"switchboard/engine"
)

func lifecycleTests() []namedTest {
	return []namedTest{
		{"CancelQueued", testCancelQueued},
		{"CancelFromEachState", testCancelStates},
		{"ExpireDue", testExpireDue},
	}
}

func testCancelQueued(t *testing.T, b *bundle) {
	b.accept("m-1")
	now := b.clock.Advance(time.Second)
	if r := b.apply(engine.ActionCancel, "m-1", ""); r.Err != nil || r.From != engine.DispatchQueued || r.To != engine.DispatchCancelled {
		t.Fatalf("cancel = %+v", r)
	}
	m := b.message("m-1")
	if m.Dispatch != engine.DispatchCancelled || m.FinalAt == nil || !m.FinalAt.Equal(now) || !m.UpdatedAt.Equal(now) || m.Status() != "cancelled" {
		t.Fatalf("cancelled view = %+v", m)
	}
	if p := b.claim(10, 1<<20); len(p.Claims) != 0 {
		t.Fatalf("claimed a cancelled message: %v", claimIDs(p))
	}
}

// testCancelStates puts one message in each dispatch state and cancels it: the store's one
// cancel refuses with the errors the API answers (dispatch started, final, not found).
func testCancelStates(t *testing.T, b *bundle) {
	step := func() time.Time { return b.clock.Advance(time.Second) }
	// retrying: queued again after a transient outcome, waiting for its retry time.
	b.accept("m-retrying")
	step()
	b.mustFinish(b.claimOne("m-retrying"), engine.AttemptTransient, engine.DispatchQueued, engine.ReportNone, "")
	// sending, unknown, submitted, failed: one claim each.
	for _, s := range []struct {
		id      string
		outcome engine.AttemptOutcome
		to      engine.Dispatch
	}{
		{"m-sending", "", ""},
		{"m-unknown", engine.AttemptMaybeSent, engine.DispatchUnknown},
		{"m-submitted", engine.AttemptAccepted, engine.DispatchSubmitted},
		{"m-failed", engine.AttemptPermanent, engine.DispatchFailed},
	} {
		b.accept(s.id)
		step()
		c := b.claimOne(s.id)
		if s.to != "" {
			b.mustFinish(c, s.outcome, s.to, engine.ReportNone, "")
		}
	}
	b.accept("m-cancelled")
	step()
	b.mustCancel("m-cancelled")
	b.accept("m-expired", withExpiry(b.clock.Now().Add(time.Second)))
	step()
	if n, err := b.store.ExpireDue(b.ctx, b.clock.Now(), 10); err != nil || n != 1 {
		t.Fatalf("ExpireDue = %d, %v", n, err)
	}
	cases := []struct {
		id   string
		want error
	}{
		{"m-retrying", nil},
		{"m-sending", engine.ErrDispatchStarted},
		{"m-unknown", engine.ErrDispatchStarted},
		{"m-submitted", engine.ErrTerminal},
		{"m-failed", engine.ErrTerminal},
		{"m-cancelled", engine.ErrTerminal},
		{"m-expired", engine.ErrTerminal},
		{"m-absent", engine.ErrNotFound},
	}
	for _, c := range cases {
		before, _ := b.store.Message(b.ctx, c.id)
		step()
		r := b.apply(engine.ActionCancel, c.id, "")
		if c.want == nil {
			if m := b.message(c.id); r.Err != nil || m.Dispatch != engine.DispatchCancelled {
				t.Fatalf("cancel %s = %+v; %s, want cancelled", c.id, r, m.Dispatch)
			}
			continue
		}
		wantErr(t, "cancel "+c.id, r.Err, c.want)
		if after, _ := b.store.Message(b.ctx, c.id); before != nil && after.Dispatch != before.Dispatch {
			t.Fatalf("a refused Cancel moved %s from %s to %s", c.id, before.Dispatch, after.Dispatch)
		}
	}
}

func testExpireDue(t *testing.T, b *bundle) {
	b.accept("m-1h", withExpiry(Epoch().Add(time.Hour)))
	b.accept("m-2h", withExpiry(Epoch().Add(2*time.Hour)))
	b.accept("m-3h", withExpiry(Epoch().Add(3*time.Hour)))
	b.accept("m-sending", withExpiry(Epoch().Add(time.Hour)))
	b.clock.Advance(time.Second)
	// A sending message is the lease holder's to finish, even past its expiry.
	p := b.claim(10, 1<<20)
	for _, c := range p.Claims {
		if c.Message.ID != "m-sending" {
			b.mustFinish(c, engine.AttemptTransient, engine.DispatchQueued, engine.ReportNone, "")
		}
	}
	now := Epoch().Add(2 * time.Hour)
	b.clock.Set(now)
	n, err := b.store.ExpireDue(b.ctx, now, 1)
	if err != nil || n != 1 {
		t.Fatalf("ExpireDue(limit 1) = %d, %v", n, err)
	}
	if m := b.message("m-1h"); m.Dispatch != engine.DispatchExpired {
		t.Fatalf("the oldest expiry was not first: m-1h is %s", m.Dispatch)
	}
	if n, err = b.store.ExpireDue(b.ctx, now, 10); err != nil || n != 1 {
		t.Fatalf("ExpireDue(limit 10) = %d, %v; want m-2h only", n, err)
	}
	if n, err = b.store.ExpireDue(b.ctx, now, 10); err != nil || n != 0 {
		t.Fatalf("ExpireDue again = %d, %v", n, err)
	}
	m := b.message("m-2h")
	last := m.Attempts[len(m.Attempts)-1]
	if m.Dispatch != engine.DispatchExpired || m.FinalAt == nil || !m.FinalAt.Equal(now) ||
		last.Outcome != engine.AttemptExpired || last.FinishedAt == nil || !last.FinishedAt.Equal(now) {
		t.Fatalf("expired message = %+v, last attempt %+v", m, last)
	}
	for id, want := range map[string]engine.Dispatch{"m-3h": engine.DispatchQueued, "m-sending": engine.DispatchSending} {
		if m := b.message(id); m.Dispatch != want {
			t.Fatalf("%s is %s, want %s", id, m.Dispatch, want)
		}
	}
}
