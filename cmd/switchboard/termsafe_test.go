package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"switchboard/engine"
)

// hostile holds what a terminal must never receive raw: ESC (here starting a colour change),
// CR (which lets later text overwrite the line), BEL, a bidi override, DEL, a C1 control and a
// byte that is not UTF-8.
const hostile = "a\x1b[31mb\rc\ad\u202ee\x7ff\u009bg\xffh"

// hostileEscaped is hostile as termSafe writes it.
const hostileEscaped = `a\x1b[31mb\rc\ad\u202ee\x7ff\u009bg\xffh`

func TestTermSafe(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                      "",
		"plain text 42 / -_.":   "plain text 42 / -_.",
		"Zoë – 東京":              "Zoë – 東京",
		hostile:                 hostileEscaped,
		"tab\there\nnew":        `tab\there\nnew`,
		"\u2066iso\u2069\u200f": `\u2066iso\u2069\u200f`,
		"\u2028line":            `\u2028line`,
		"\U000e0001tag":         `\U000e0001tag`,
	} {
		if got := termSafe(in); got != want {
			t.Errorf("termSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// checkNoRaw fails when out carries any raw character of hostile, or lacks its escaped form.
func checkNoRaw(t *testing.T, what, out string) {
	t.Helper()
	for _, raw := range []string{"\x1b", "\r", "\a", "\u202e", "\x7f", "\u009b", "\xff"} {
		if strings.Contains(out, raw) {
			t.Errorf("%s prints %q raw:\n%q", what, raw, out)
		}
	}
	if !strings.Contains(out, hostileEscaped) {
		t.Errorf("%s does not show the escaped value %s:\n%s", what, hostileEscaped, out)
	}
}

// TestHumanOutputEscapesStoredText stores hostile text in every field a caller, a gateway or a
// peer supplies, then reads it back with each human printer.
func TestHumanOutputEscapesStoredText(t *testing.T) {
	t.Parallel()
	f := newOpsFixture(t)
	now := f.e.clock.Now()
	id := "0190f5a0-0000-7000-8000-00000000beef"
	acc := engine.Acceptance{
		Idempotency: engine.IdempotencyRecord{Issuer: "https://issuer.test", Subject: "case-system",
			Key: "key-hostile", RequestHash: []byte("hash"), Response: []byte(`{}`), ExpiresAt: now.Add(time.Hour)},
		Message: engine.Message{ID: id, Channel: engine.ChannelSMS, SenderProfile: hostile,
			Provider: "sms-gateway", RecipientKind: "phone", AccessProfile: "case-notices", Caller: "caller:test",
			TemplateID: hostile, TemplateVersion: hostile, CorrelationID: hostile,
			AcceptedAt: now, ExpiresAt: now.Add(24 * time.Hour)},
		Payload: engine.Payload{Recipient: testPhone, Parts: map[string]string{"text": "hi"}},
		Audit:   engine.AuditEntry{Event: "message.accepted", Actor: "caller:test"},
	}
	if r := f.st.Accept(f.ctx, []engine.Acceptance{acc}); r[0].Err != nil {
		t.Fatal(r[0].Err)
	}
	p, err := f.st.ClaimPage(f.ctx, now, engine.PageLimits{MaxEntries: 1, MaxBytes: 1 << 20}, time.Minute)
	if err != nil || len(p.Claims) != 1 {
		t.Fatalf("claim: %v %v", p, err)
	}
	// A gateway's reference and an adapter's code come from outside too.
	if err := f.st.Finish(f.ctx, engine.Finish{Lease: p.Claims[0].Lease, Attempt: engine.AttemptPermanent, Code: hostile,
		Dispatch: engine.DispatchFailed, Report: engine.ReportNone, Provider: "sms-gateway", ProviderRef: hostile,
		ProviderAttempts: 1, FinishedAt: now,
		Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker", MessageID: id, Outcome: "permanent"}}); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := f.run("messages", "show", id)
	if code != 0 {
		t.Fatalf("show: exit %d: %s", code, errOut)
	}
	checkNoRaw(t, "messages show", out)
	for _, row := range []string{"sender profile:", "template:", "correlation id:", "provider reference:", "  1 "} {
		if !lineWith(out, row, hostileEscaped) {
			t.Errorf("messages show lacks the row %q with the escaped value:\n%s", row, out)
		}
	}
	out, errOut, code = f.run("messages", "list")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	checkNoRaw(t, "messages list", out)

	// The inbox: a gateway's "from" and a peer's protocol and message id.
	inboxID, _ := uuid.NewV7()
	if _, err := f.st.PutInbox(context.Background(), engine.InboxEntry{ID: inboxID.String(), From: hostile,
		Protocol: hostile, MessageID: hostile, ReceivedAt: now, Payload: []byte(hostile),
		Response: []byte(`{"accepted":true}`)}); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = f.run("inbox", "list")
	if code != 0 {
		t.Fatalf("inbox list: exit %d: %s", code, errOut)
	}
	checkNoRaw(t, "inbox list", out)

	// A journal record changed to hostile text is quoted in audit verify's error.
	if _, err := f.raw().Exec(fmt.Sprintf(`UPDATE audit SET outcome = '%s' WHERE writer = '%s' AND seq = 1`,
		hostile, f.st.WriterID())); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = f.run("audit", "verify")
	if code != 1 {
		t.Fatalf("audit verify after tampering: exit %d: %s", code, errOut)
	}
	for _, raw := range []string{"\x1b", "\r", "\a", "\u202e", "\x7f", "\u009b"} {
		if strings.Contains(errOut, raw) {
			t.Errorf("audit verify prints %q raw:\n%q", raw, errOut)
		}
	}
	if !strings.Contains(errOut, `\u202e`) {
		t.Errorf("audit verify does not show the escaped record:\n%s", errOut)
	}
}

// lineWith reports whether out has a line starting with prefix and containing want.
func lineWith(out, prefix, want string) bool {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) && strings.Contains(l, want) {
			return true
		}
	}
	return false
}
