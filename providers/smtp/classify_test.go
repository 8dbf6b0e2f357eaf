package smtp_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"switchboard/engine"
	smtp "switchboard/providers/smtp"
)

func smtpErr(code int) error {
	return &gosmtp.SMTPError{Code: code, EnhancedCode: gosmtp.EnhancedCode{code / 100, 0, 0}, Message: "scripted"}
}

func TestRepliesClassify(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		cfg      farConfig
		class    engine.OutcomeClass
		code     string
		received int32
	}{
		{"250 after DATA is accepted", farConfig{}, engine.OutcomeAccepted, "", 1},
		{"251 after DATA is accepted", farConfig{onData: reply(251)}, engine.OutcomeAccepted, "", 1},
		{"421 to MAIL is transient", farConfig{mailErr: smtpErr(421)}, engine.OutcomeTransient, "smtp.421", 0},
		{"451 to RCPT is transient", farConfig{rcptErr: smtpErr(451)}, engine.OutcomeTransient, "smtp.451", 0},
		{"452 to the message, unread, is transient", farConfig{dataErr: smtpErr(452)}, engine.OutcomeTransient, "smtp.452", 0},
		{"450 after DATA is transient", farConfig{onData: reply(450)}, engine.OutcomeTransient, "smtp.450", 1},
		{"553 to MAIL is permanent", farConfig{mailErr: smtpErr(553)}, engine.OutcomePermanent, "smtp.553", 0},
		{"550 to RCPT is permanent", farConfig{rcptErr: smtpErr(550)}, engine.OutcomePermanent, "smtp.550", 0},
		{"554 to the message, unread, is permanent", farConfig{dataErr: smtpErr(554)}, engine.OutcomePermanent, "smtp.554", 0},
		{"552 after DATA is permanent", farConfig{onData: reply(552)}, engine.OutcomePermanent, "smtp.552", 1},
		{"535 to AUTH is permanent", farConfig{username: "u", password: "other"}, engine.OutcomePermanent, "smtp.535", 0},
		{"drop after DATA is maybe-sent", farConfig{onData: drop}, engine.OutcomeMaybeSent, smtp.CodeReplyLost, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFar(t, tc.cfg)
			cfg := smtp.Config{}
			if tc.cfg.username != "" {
				cfg.Username, cfg.Password = "u", "p"
			}
			o := newProvider(t, f, cfg).Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000d1"))
			wantOutcome(t, o, tc.class, tc.code)
			if o.ProviderReference == "" {
				t.Fatalf("outcome without the provider reference")
			}
			if got := f.received.Load(); got != tc.received {
				t.Fatalf("relay began %d message bodies, want %d", got, tc.received)
			}
		})
	}
}

func TestStallAfterDataIsMaybeSent(t *testing.T) {
	t.Parallel()
	for name, bound := range map[string]func(p *smtp.Provider, out *engine.Outbound) engine.Outcome{
		"context deadline": func(p *smtp.Provider, out *engine.Outbound) engine.Outcome {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			return p.Send(ctx, out)
		},
		"outbound deadline": func(p *smtp.Provider, out *engine.Outbound) engine.Outcome {
			out.Deadline = time.Now().Add(300 * time.Millisecond)
			return p.Send(context.Background(), out)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFar(t, farConfig{onData: stall})
			p := newProvider(t, f, smtp.Config{})
			start := time.Now()
			o := bound(p, email("0190f5a0-0000-7000-8000-0000000000d2"))
			wantOutcome(t, o, engine.OutcomeMaybeSent, smtp.CodeReplyLost)
			if f.received.Load() != 1 {
				t.Fatalf("the relay did not read the message")
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("the stalled send took %v", d)
			}
		})
	}
}

func TestBrokenConnectionDuringTheBodyIsTransient(t *testing.T) {
	t.Parallel()
	// The body is far larger than the socket buffers, so the client is still writing it when the
	// relay hangs up: the final "." never leaves and the relay cannot have taken the message.
	f := newFar(t, farConfig{cutAfter: 4096})
	p := newProvider(t, f, smtp.Config{})
	out := email("0190f5a0-0000-7000-8000-0000000000d8")
	out.Parts["text"] = strings.Repeat("A long body line that is plain ASCII.\n", 1<<18) // ~10 MiB
	wantOutcome(t, p.Send(context.Background(), out), engine.OutcomeTransient, smtp.CodeBodyNotSent)
	if f.received.Load() != 1 {
		t.Fatalf("the relay never began reading the body")
	}
}

func TestProviderTimeoutBoundsTheConversation(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{onData: stall})
	p := newProvider(t, f, smtp.Config{Timeout: 200 * time.Millisecond})
	o := p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000d3"))
	wantOutcome(t, o, engine.OutcomeMaybeSent, smtp.CodeReplyLost)
}

func TestCancelledSendsAreTransient(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{})
	p := newProvider(t, f, smtp.Config{})

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	wantOutcome(t, p.Send(ctx, email("0190f5a0-0000-7000-8000-0000000000d4")), engine.OutcomeTransient, smtp.CodeCancelled)

	out := email("0190f5a0-0000-7000-8000-0000000000d5")
	out.Deadline = time.Now().Add(-time.Second)
	wantOutcome(t, p.Send(context.Background(), out), engine.OutcomeTransient, smtp.CodeTimeout)
	if f.sessions.Load() != 0 {
		t.Fatalf("a send whose context had ended connected")
	}
}

func TestUnreachableAndSilentRelaysAreTransient(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	p, err := smtp.New(smtp.Config{Host: "127.0.0.1", Port: port, TLS: smtp.TLSNone})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	wantOutcome(t, p.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000d6")), engine.OutcomeTransient, smtp.CodeConnectFailed)

	// A listener that accepts and never greets: the deadline ends the wait before anything left.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()
	p2, err := smtp.New(smtp.Config{Host: "127.0.0.1", Port: silent.Addr().(*net.TCPAddr).Port, TLS: smtp.TLSNone, Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p2.Close() })
	wantOutcome(t, p2.Send(context.Background(), email("0190f5a0-0000-7000-8000-0000000000d7")), engine.OutcomeTransient, smtp.CodeTimeout)
}

func TestNewValidatesConfig(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]smtp.Config{
		"no host":                     {Port: 25, TLS: smtp.TLSNone},
		"tls none to a remote host":   {Host: "smtp.example", Port: 25, TLS: smtp.TLSNone},
		"tls none without a port":     {Host: "127.0.0.1", TLS: smtp.TLSNone},
		"unknown tls":                 {Host: "smtp.example", TLS: "ssl"},
		"host with a port":            {Host: "smtp.example:25"},
		"password without a username": {Host: "smtp.example", Password: "p"},
		"trusted CA file missing":     {Host: "smtp.example", TrustedCAFile: "/nonexistent/ca.pem"},
		"port out of range":           {Host: "smtp.example", Port: 70000},
	} {
		if _, err := smtp.New(cfg); err == nil {
			t.Errorf("%s: New accepted %+v", name, cfg)
		}
	}
	for name, cfg := range map[string]smtp.Config{
		"starttls default":        {Host: "smtp.example"},
		"implicit":                {Host: "smtp.example", TLS: smtp.TLSImplicit},
		"none to localhost":       {Host: "localhost", Port: 2525, TLS: smtp.TLSNone},
		"none to IPv6 loopback":   {Host: "::1", Port: 2525, TLS: smtp.TLSNone},
		"none to 127.0.0.2":       {Host: "127.0.0.2", Port: 2525, TLS: smtp.TLSNone},
		"credentials on starttls": {Host: "smtp.example", Username: "u", Password: "p"},
	} {
		p, err := smtp.New(cfg)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if p.Kind() != "smtp" {
			t.Errorf("Kind %q", p.Kind())
		}
		_ = p.Close()
	}
}
