package storetest

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
)

// Exercise runs every behaviour of engine.Store as parallel subtests, each on a store of its
// own. open must return a fresh, empty, migrated store whose self-made times come from clock;
// it may register cleanups on t, and Exercise closes the store too, so Close must be safe to
// call twice. A store that also offers StatsFor or VerifyAudit (see StatsForer and
// AuditVerifier) has those checked too.
func Exercise(t *testing.T, open func(t *testing.T, clock engine.Clock) engine.Store) {
	t.Helper()
	h := harness{open: open}
	groups := []struct {
		name  string
		tests []namedTest
	}{
		{"Accept", acceptTests()},
		{"Claim", claimTests()},
		{"Lease", leaseTests()},
		{"Lifecycle", lifecycleTests()},
		{"Receipts", receiptTests()},
		{"Stats", statsTests()},
		{"Audit", auditTests()},
		{"Operator", operatorTests()},
		{"Inbox", inboxTests()},
		{"Transitions", transitionTests()},
		{"Operations", operationTests()},
		{"InboxQuota", inboxQuotaTests()},
		{"Reason", reasonTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			t.Parallel()
			for _, nt := range g.tests {
				t.Run(nt.name, func(t *testing.T) {
					t.Parallel()
					nt.test(t, h.setup(t))
				})
			}
		})
	}
}

// namedTest is one subtest of Exercise.
type namedTest struct {
	name string
	test func(t *testing.T, b *bundle)
}

// Epoch is where every test's fake clock starts: a whole millisecond, since stores may keep
// times at millisecond precision.
func Epoch() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) }

type harness struct {
	open func(t *testing.T, clock engine.Clock) engine.Store
}

// bundle is what one test works with.
type bundle struct {
	t     *testing.T
	ctx   context.Context
	clock *enginetest.FakeClock
	store engine.Store
	h     harness // opens more stores, for subtests that each need one of their own
}

func (h harness) setup(t *testing.T) *bundle {
	t.Helper()
	clock := enginetest.NewFakeClock(Epoch())
	s := h.open(t, clock)
	if s == nil {
		t.Fatal("open returned no store")
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &bundle{t: t, ctx: t.Context(), clock: clock, store: s, h: h}
}

// option changes an acceptance before it is submitted.
type option func(*engine.Acceptance)

// withText sets the payload's text part to n bytes.
func withText(n int) option {
	return func(a *engine.Acceptance) { a.Payload.Parts = map[string]string{"text": strings.Repeat("x", n)} }
}

// withNextAttempt sets when the message is first due.
func withNextAttempt(at time.Time) option {
	return func(a *engine.Acceptance) { a.Message.NextAttemptAt = at }
}

// withAcceptedAt sets the acceptance time (and with it the first due time).
func withAcceptedAt(at time.Time) option {
	return func(a *engine.Acceptance) {
		a.Message.AcceptedAt, a.Message.UpdatedAt, a.Message.NextAttemptAt = at, at, at
	}
}

// withNotBefore delays the first attempt.
func withNotBefore(at time.Time) option {
	return func(a *engine.Acceptance) { a.Message.NotBefore = &at }
}

// withExpiry sets when the message expires.
func withExpiry(at time.Time) option {
	return func(a *engine.Acceptance) { a.Message.ExpiresAt = at }
}

// withKey sets the Idempotency-Key and the request body it stands for.
func withKey(key, body string) option {
	return func(a *engine.Acceptance) {
		h := sha256.Sum256([]byte(body))
		a.Idempotency.Key, a.Idempotency.RequestHash = key, h[:]
	}
}

// withSubject sets the caller's subject of the idempotency record.
func withSubject(sub string) option {
	return func(a *engine.Acceptance) { a.Idempotency.Subject = sub }
}

// withReceiptWindow sets when the idempotency record expires.
func withReceiptWindow(until time.Time) option {
	return func(a *engine.Acceptance) { a.Idempotency.ExpiresAt = until }
}

// withQuota sets the access profile and its daily limit.
func withQuota(profile string, limit int) option {
	return func(a *engine.Acceptance) { a.Message.AccessProfile, a.DailyLimit = profile, limit }
}

// acceptance builds a valid acceptance of message id at the clock's time.
func (b *bundle) acceptance(id string, opts ...option) engine.Acceptance {
	now := b.clock.Now()
	a := engine.Acceptance{
		Message: engine.Message{
			ID: id, Dispatch: engine.DispatchQueued, Report: engine.ReportNone,
			Channel: engine.ChannelSMS, SenderProfile: "reminders-sms", Provider: "sms-gateway",
			RecipientKind: "phone", TemplateID: "appointment-reminder", TemplateVersion: "1",
			Locale: "en", CorrelationID: "corr-" + id, AccessProfile: "case-notices",
			Caller: "caller-7f3a", AcceptedAt: now, ExpiresAt: now.Add(24 * time.Hour),
			UpdatedAt: now, NextAttemptAt: now, Generation: 1,
		},
		Payload: engine.Payload{Recipient: "+15550100", Parts: map[string]string{"text": "Hello " + id}},
		Audit:   engine.AuditEntry{Event: "message.accepted", Actor: "caller-7f3a", MessageID: id, Outcome: "queued", At: now},
	}
	a.Idempotency = engine.IdempotencyRecord{
		Issuer: "https://id.example", Subject: "case-system",
		Response: []byte(fmt.Sprintf(`{"id":%q,"status":"queued"}`, id)), ExpiresAt: now.Add(7 * 24 * time.Hour),
	}
	withKey("key-"+id, "body-"+id)(&a)
	for _, o := range opts {
		o(&a)
	}
	return a
}

// accept accepts one message and fails the test unless it was newly accepted.
func (b *bundle) accept(id string, opts ...option) engine.AcceptResult {
	b.t.Helper()
	res := b.store.Accept(b.ctx, []engine.Acceptance{b.acceptance(id, opts...)})
	if len(res) != 1 {
		b.t.Fatalf("Accept returned %d results for 1 acceptance", len(res))
	}
	if res[0].Err != nil || res[0].Replayed || res[0].MessageID != id {
		b.t.Fatalf("Accept(%s) = %+v, want a new message", id, res[0])
	}
	return res[0]
}

// message reads a message and fails the test if it cannot.
func (b *bundle) message(id string) *engine.Message {
	b.t.Helper()
	m, err := b.store.Message(b.ctx, id)
	if err != nil {
		b.t.Fatalf("Message(%s): %v", id, err)
	}
	return m
}

// claim claims a page at the clock's time under a one-minute lease.
func (b *bundle) claim(entries int, bytes int64) engine.Page {
	b.t.Helper()
	p, err := b.store.ClaimPage(b.ctx, b.clock.Now(), engine.PageLimits{MaxEntries: entries, MaxBytes: bytes}, time.Minute)
	if err != nil {
		b.t.Fatalf("ClaimPage: %v", err)
	}
	return p
}

// claimOne claims exactly the message id, the only one due.
func (b *bundle) claimOne(id string) engine.Claim {
	b.t.Helper()
	p := b.claim(10, 1<<20)
	if got := claimIDs(p); len(got) != 1 || got[0] != id {
		b.t.Fatalf("claimed %v, want [%s]", got, id)
	}
	return p.Claims[0]
}

// finish closes a claim's attempt with outcome, moving the message to dispatch.
func (b *bundle) finish(c engine.Claim, outcome engine.AttemptOutcome, d engine.Dispatch, r engine.Report, ref string) error {
	return b.store.Finish(b.ctx, engine.Finish{
		Lease: c.Lease, Attempt: outcome, Code: "code-" + string(outcome), ProviderRef: ref,
		Dispatch: d, Report: r, NextAttemptAt: b.clock.Now().Add(time.Minute),
		ProviderAttempts: c.Message.ProviderAttempts + 1, Provider: c.Message.Provider,
		FinishedAt: b.clock.Now(),
		Audit:      engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: c.Message.ID, Outcome: string(outcome), At: b.clock.Now()},
	})
}

// mustFinish is finish that fails the test on error.
func (b *bundle) mustFinish(c engine.Claim, outcome engine.AttemptOutcome, d engine.Dispatch, r engine.Report, ref string) {
	b.t.Helper()
	if err := b.finish(c, outcome, d, r, ref); err != nil {
		b.t.Fatalf("Finish(%s, %s): %v", c.Message.ID, outcome, err)
	}
}

// claimIDs lists a page's message ids in order.
func claimIDs(p engine.Page) []string {
	out := make([]string, len(p.Claims))
	for i, c := range p.Claims {
		out[i] = c.Message.ID
	}
	return out
}

// wantErr fails the test unless errors.Is(err, target).
func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want %v", what, err, target)
	}
}

// equalIDs fails the test unless got and want list the same ids in the same order.
func equalIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: %v, want %v", what, got, want)
	}
}
