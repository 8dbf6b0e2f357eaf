package smtp_test

import (
	"net"
	"strconv"
	"testing"

	"switchboard/engine"
	smtp "switchboard/providers/smtp"
)

// newProvider connects a provider to f with tls none unless cfg says otherwise.
func newProvider(t testing.TB, f *far, cfg smtp.Config) *smtp.Provider {
	t.Helper()
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Port == 0 {
		cfg.Port = f.port()
	}
	if cfg.TLS == "" {
		cfg.TLS = smtp.TLSNone
	}
	if cfg.ID == "" {
		cfg.ID = "mail-relay"
	}
	p, err := smtp.New(cfg)
	if err != nil {
		t.Fatalf("smtp.New: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// splitHostPort splits a listener address for Config.
func splitHostPort(t testing.TB, addr string) (string, int) {
	t.Helper()
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(p)
	if err != nil {
		t.Fatal(err)
	}
	return host, port
}

// email is a first attempt of an email message.
func email(id string) *engine.Outbound {
	return &engine.Outbound{
		MessageID: id, Generation: 1, Attempt: 1, Channel: engine.ChannelEmail,
		Recipient: "pat@example.net",
		Parts: map[string]string{
			"subject": "Your appointment",
			"text":    "Hello Pat,\nsee you on Monday.\n",
		},
		SenderProfile: engine.SenderProfileView{ID: "reminders-email", Channel: engine.ChannelEmail, Sender: "notices@example.org"},
	}
}

func wantOutcome(t testing.TB, o engine.Outcome, class engine.OutcomeClass, code string) {
	t.Helper()
	if o.Class != class || (code != "*" && o.Code != code) {
		t.Fatalf("outcome %s %q (reason %q), want %s %q", o.Class, o.Code, o.Reason, class, code)
	}
	if o.Report != engine.ReportUnavailable {
		t.Fatalf("outcome report %q, want unavailable", o.Report)
	}
}
