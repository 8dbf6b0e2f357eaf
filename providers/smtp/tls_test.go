package smtp_test

import (
	"context"
	"testing"

	"switchboard/engine"
	smtp "switchboard/providers/smtp"
)

func TestStartTLSRequiredButNotOfferedNeverSendsPlainText(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{username: "u", password: "p"}) // offers AUTH, not STARTTLS
	p := newProvider(t, f, smtp.Config{TLS: smtp.TLSStartTLS, Username: "u", Password: "p"})
	o := p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000e1"))
	wantOutcome(t, o, engine.OutcomeTransient, smtp.CodeStartTLSUnavailable)
	if f.mailCmds.Load() != 0 || len(f.got()) != 0 {
		t.Fatalf("the provider went on in plain text")
	}
}

func TestStartTLSWithTrustedCA(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	f := newFar(t, farConfig{startTLS: pki.server, username: "relay-user", password: "relay-pass"})
	p := newProvider(t, f, smtp.Config{
		TLS: smtp.TLSStartTLS, TrustedCAFile: pki.caFile, Username: "relay-user", Password: "relay-pass",
	})
	for i := range 3 {
		o := p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000e"+string(rune('2'+i))))
		wantOutcome(t, o, engine.OutcomeAccepted, "")
	}
	mails := f.got()
	if len(mails) != 3 {
		t.Fatalf("relay read %d messages", len(mails))
	}
	for _, m := range mails {
		if !m.tls || m.user != "relay-user" {
			t.Fatalf("message carried with tls=%v as %q, want TLS as relay-user", m.tls, m.user)
		}
	}
	if n := f.sessions.Load(); n != 1 {
		t.Fatalf("%d connections for 3 messages, want 1 reused", n)
	}
}

func TestUntrustedCertificateIsTransient(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	for _, mode := range []string{smtp.TLSStartTLS, smtp.TLSImplicit} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			cfg := farConfig{startTLS: pki.server}
			if mode == smtp.TLSImplicit {
				cfg = farConfig{implicit: pki.server}
			}
			f := newFar(t, cfg)
			p := newProvider(t, f, smtp.Config{TLS: mode}) // system roots: the test CA is unknown
			o := p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000e5"))
			wantOutcome(t, o, engine.OutcomeTransient, smtp.CodeTLSFailed)
			if f.mailCmds.Load() != 0 {
				t.Fatalf("MAIL FROM went over an unverified connection")
			}
		})
	}
}

func TestImplicitTLS(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	f := newFar(t, farConfig{implicit: pki.server})
	p := newProvider(t, f, smtp.Config{TLS: smtp.TLSImplicit, TrustedCAFile: pki.caFile, Host: "localhost"})
	wantOutcome(t, p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000e6")), engine.OutcomeAccepted, "")
	if m := f.got(); len(m) != 1 || !m[0].tls {
		t.Fatalf("message not carried over implicit TLS: %+v", m)
	}
}

func TestAuthMechanisms(t *testing.T) {
	t.Parallel()
	for name, loginOnly := range map[string]bool{"PLAIN": false, "LOGIN": true} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFar(t, farConfig{username: "u", password: "secret", loginOnly: loginOnly})
			p := newProvider(t, f, smtp.Config{Username: "u", Password: "secret"})
			wantOutcome(t, p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000e7")), engine.OutcomeAccepted, "")
			if m := f.got(); len(m) != 1 || m[0].user != "u" {
				t.Fatalf("not authenticated as u: %+v", m)
			}
		})
	}
	t.Run("not offered", func(t *testing.T) {
		t.Parallel()
		f := newFar(t, farConfig{})
		p := newProvider(t, f, smtp.Config{Username: "u", Password: "secret"})
		wantOutcome(t, p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000e8")), engine.OutcomeTransient, smtp.CodeAuthUnavailable)
		if f.mailCmds.Load() != 0 {
			t.Fatalf("MAIL FROM went out unauthenticated")
		}
	})
	t.Run("required but not configured", func(t *testing.T) {
		t.Parallel()
		f := newFar(t, farConfig{username: "u", password: "secret"})
		p := newProvider(t, f, smtp.Config{})
		// go-smtp answers MAIL without AUTH with 502 5.7.0.
		wantOutcome(t, p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000e9")), engine.OutcomePermanent, "smtp.502")
	})
}
