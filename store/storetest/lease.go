package storetest

import (
	"reflect"
	"testing"
	"time"

	"switchboard/engine"
)

func leaseTests() []namedTest {
	return []namedTest{
		{"FinishAccepted", testFinishAccepted},
		{"FinishWithStaleTokenChangesNothing", testFinishFenced},
		{"FinishTransientRequeues", testFinishTransient},
		{"Renew", testRenew},
		{"LapsedAfterExpiry", testLapsed},
		{"RecoveredLeaseFencesOldHolder", testRecoverLapsed},
	}
}

func testFinishAccepted(t *testing.T, b *bundle) {
	b.accept("m-1")
	claimedAt := b.clock.Advance(time.Second)
	c := b.claimOne("m-1")
	done := b.clock.Advance(2 * time.Second)
	b.mustFinish(c, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportSent, "ref-1")
	m := b.message("m-1")
	if m.Dispatch != engine.DispatchSubmitted || m.Report != engine.ReportSent || m.ProviderRef != "ref-1" ||
		m.FinalAt == nil || !m.FinalAt.Equal(done) || !m.UpdatedAt.Equal(done) ||
		m.ReportedAt == nil || !m.ReportedAt.Equal(done) || m.ProviderAttempts != 1 ||
		m.LastOutcomeClass != engine.OutcomeAccepted {
		t.Fatalf("finished message = %+v", m)
	}
	if len(m.Attempts) != 1 {
		t.Fatalf("attempts = %+v, want one", m.Attempts)
	}
	a := m.Attempts[0]
	if a.Outcome != engine.AttemptAccepted || a.Attempt != 1 || a.Generation != 1 || a.Code != "code-accepted" ||
		a.ProviderRef != "ref-1" || a.Provider != "sms-gateway" || !a.StartedAt.Equal(claimedAt) ||
		a.FinishedAt == nil || !a.FinishedAt.Equal(done) {
		t.Fatalf("attempt = %+v", a)
	}
	// The lease is spent.
	err := b.finish(c, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportSent, "ref-1")
	wantErr(t, "second Finish", err, engine.ErrLeaseLost)
}

func testFinishFenced(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.clock.Advance(time.Second)
	c := b.claimOne("m-1")
	before := b.message("m-1")
	stale := c
	stale.Lease.Token = c.Lease.Token + "-stale"
	err := b.finish(stale, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportSent, "ref-x")
	wantErr(t, "Finish with a stale token", err, engine.ErrLeaseLost)
	if after := b.message("m-1"); !reflect.DeepEqual(before, after) {
		t.Fatalf("a fenced Finish changed the message:\nbefore %+v\nafter  %+v", before, after)
	}
	b.mustFinish(c, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportSent, "ref-1")
}

func testFinishTransient(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.clock.Advance(time.Second)
	c := b.claimOne("m-1")
	b.mustFinish(c, engine.AttemptTransient, engine.DispatchQueued, engine.ReportNone, "") // next attempt in a minute
	m := b.message("m-1")
	if m.Dispatch != engine.DispatchQueued || m.FinalAt != nil || !m.NextAttemptAt.Equal(b.clock.Now().Add(time.Minute)) ||
		len(m.Attempts) != 1 || m.Attempts[0].Outcome != engine.AttemptTransient {
		t.Fatalf("after a transient outcome: %+v", m)
	}
	if p := b.claim(10, 1<<20); len(p.Claims) != 0 {
		t.Fatalf("claimed %v before the retry time", claimIDs(p))
	}
	b.clock.Advance(time.Minute)
	c2 := b.claimOne("m-1")
	if c2.Message.Attempt != 2 || c2.Lease.Token == c.Lease.Token {
		t.Fatalf("second claim = attempt %d, token reused %v", c2.Message.Attempt, c2.Lease.Token == c.Lease.Token)
	}
	m = b.message("m-1")
	if len(m.Attempts) != 2 || m.Attempts[0].Attempt != 1 || m.Attempts[1].Attempt != 2 ||
		m.Attempts[1].Outcome != engine.AttemptInProgress {
		t.Fatalf("attempts = %+v", m.Attempts)
	}
}

func testRenew(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.accept("m-2")
	b.clock.Advance(time.Second)
	p := b.claim(10, 1<<20) // leases lapse one minute from now
	if len(p.Claims) != 2 {
		t.Fatalf("claimed %v", claimIDs(p))
	}
	until := b.clock.Now().Add(3 * time.Minute)
	leases := []engine.LeaseRef{p.Claims[0].Lease, p.Claims[1].Lease}
	if err := b.store.RenewLease(b.ctx, leases, until); err != nil {
		t.Fatalf("RenewLease: %v", err)
	}
	b.clock.Advance(2 * time.Minute)
	if l, err := b.store.LapsedLeases(b.ctx, b.clock.Now(), 10); err != nil || len(l) != 0 {
		t.Fatalf("LapsedLeases after renewal = %+v, %v", l, err)
	}
	// m-2 finishes; renewing both extends m-1 and reports the lost lease of m-2.
	b.mustFinish(p.Claims[1], engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportSent, "ref-2")
	err := b.store.RenewLease(b.ctx, leases, b.clock.Now().Add(10*time.Minute))
	wantErr(t, "renewing a finished lease", err, engine.ErrLeaseLost)
	b.clock.Advance(5 * time.Minute)
	if l, err := b.store.LapsedLeases(b.ctx, b.clock.Now(), 10); err != nil || len(l) != 0 {
		t.Fatalf("m-1 was not renewed alongside the lost lease: %+v, %v", l, err)
	}
}

func testLapsed(t *testing.T, b *bundle) {
	for _, id := range []string{"m-1", "m-2", "m-3"} {
		b.accept(id)
		b.clock.Advance(time.Second)
		b.claimOne(id) // leases lapse at +1m1s, +1m2s, +1m3s
	}
	b.clock.Set(Epoch().Add(time.Minute + time.Second))
	if l, err := b.store.LapsedLeases(b.ctx, b.clock.Now(), 10); err != nil || len(l) != 0 {
		t.Fatalf("LapsedLeases at the expiry instant = %+v, %v", l, err)
	}
	b.clock.Set(Epoch().Add(time.Minute + 2500*time.Millisecond))
	l, err := b.store.LapsedLeases(b.ctx, b.clock.Now(), 10)
	if err != nil || len(l) != 2 || l[0].Message.ID != "m-1" || l[1].Message.ID != "m-2" {
		t.Fatalf("LapsedLeases = %+v, %v; want m-1 and m-2", l, err)
	}
	if l[0].Lease.Token == "" || l[0].Lease.MessageID != "m-1" || !l[0].Lease.ExpiresAt.Equal(Epoch().Add(time.Minute+time.Second)) ||
		l[0].Message.Dispatch != engine.DispatchSending {
		t.Fatalf("lapsed claim = %+v", l[0])
	}
	if l, _ := b.store.LapsedLeases(b.ctx, b.clock.Now(), 1); len(l) != 1 {
		t.Fatalf("LapsedLeases(limit 1) returned %d", len(l))
	}
}

func testRecoverLapsed(t *testing.T, b *bundle) {
	b.accept("m-1")
	b.clock.Advance(time.Second)
	c := b.claimOne("m-1")
	b.clock.Advance(2 * time.Minute)
	l, err := b.store.LapsedLeases(b.ctx, b.clock.Now(), 10)
	if err != nil || len(l) != 1 || l[0].Lease.Token != c.Lease.Token {
		t.Fatalf("LapsedLeases = %+v, %v", l, err)
	}
	recovered := engine.Claim{Message: l[0].Message, Lease: l[0].Lease}
	b.mustFinish(recovered, engine.AttemptInterrupt, engine.DispatchUnknown, engine.ReportNone, "")
	err = b.finish(c, engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportSent, "ref-late")
	wantErr(t, "the old holder's Finish after recovery", err, engine.ErrLeaseLost)
	m := b.message("m-1")
	if m.Dispatch != engine.DispatchUnknown || m.ProviderRef != "" || len(m.Attempts) != 1 ||
		m.Attempts[0].Outcome != engine.AttemptInterrupt || m.LastOutcomeClass != engine.OutcomeMaybeSent {
		t.Fatalf("recovered message = %+v", m)
	}
}
