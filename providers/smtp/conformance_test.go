package smtp_test

import (
	"net"
	"testing"

	gosmtp "github.com/emersion/go-smtp"

	"switchboard/engine"
	"switchboard/providers/providertest"
	smtp "switchboard/providers/smtp"
)

// TestConformance runs the provider conformance suite against an in-process go-smtp relay.
func TestConformance(t *testing.T) {
	t.Parallel()
	providertest.Exercise(t, providertest.Harness{
		Kind: "smtp",
		New: func(t *testing.T, b providertest.Behaviour) providertest.Far {
			var cfg farConfig
			switch b {
			case providertest.Refuse:
				cfg.rcptErr = &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
			case providertest.DropAfterReceive:
				cfg.onData = drop
			case providertest.StallAfterReceive:
				cfg.onData = stall
			case providertest.Unreachable:
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				port := ln.Addr().(*net.TCPAddr).Port
				_ = ln.Close()
				p, err := smtp.New(smtp.Config{ID: "conformance", Host: "127.0.0.1", Port: port, TLS: smtp.TLSNone})
				if err != nil {
					t.Fatal(err)
				}
				return providertest.Far{Provider: p}
			}
			f := newFar(t, cfg)
			p, err := smtp.New(smtp.Config{ID: "conformance", Host: "127.0.0.1", Port: f.port(), TLS: smtp.TLSNone})
			if err != nil {
				t.Fatal(err)
			}
			return providertest.Far{Provider: p, Received: func() int { return int(f.received.Load()) }}
		},
		Outbound: func() *engine.Outbound { return email("0190f5a0-0000-7000-8000-000000000001") },
	})
}
