package smtp_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	smtp "switchboard/providers/smtp"
)

func id(i int) string { return fmt.Sprintf("0190f5a0-0000-7000-8000-%012d", i) }

func TestConnectionIsReused(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{})
	p := newProvider(t, f, smtp.Config{})
	for i := range 10 {
		wantOutcome(t, p.Send(context.Background(), email(id(i))), engine.OutcomeAccepted, "")
	}
	if n := f.sessions.Load(); n != 1 {
		t.Fatalf("%d connections for 10 sequential messages, want 1", n)
	}
	if n := len(f.got()); n != 10 {
		t.Fatalf("relay read %d messages", n)
	}
}

func TestConcurrencyLimitBoundsConnections(t *testing.T) {
	t.Parallel()
	const limit, messages = 3, 12
	// The first `limit` messages wait for each other inside DATA, so that the conversations
	// overlap; a provider without a limit would then have more than `limit` in DATA at once.
	var arrivals atomic.Int32
	var together sync.WaitGroup
	together.Add(limit)
	f := newFar(t, farConfig{onData: func(*far, *gosmtp.Conn, []byte) error {
		if arrivals.Add(1) <= limit {
			together.Done()
			together.Wait()
		}
		return nil
	}})
	p := newProvider(t, f, smtp.Config{ConcurrencyLimit: limit})
	var wg sync.WaitGroup
	outcomes := make([]engine.Outcome, messages)
	for i := range messages {
		wg.Go(func() { outcomes[i] = p.Send(context.Background(), email(id(i))) })
	}
	wg.Wait()
	for _, o := range outcomes {
		wantOutcome(t, o, engine.OutcomeAccepted, "")
	}
	if n := f.maxInData.Load(); n != limit {
		t.Fatalf("%d messages in DATA at once, want %d", n, limit)
	}
	if n := f.sessions.Load(); n > limit {
		t.Fatalf("%d connections, want at most %d", n, limit)
	}
}

func TestMaxMessagesPerConnection(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{})
	p := newProvider(t, f, smtp.Config{MaxMessagesPerConnection: 2})
	for i := range 5 {
		wantOutcome(t, p.Send(context.Background(), email(id(i))), engine.OutcomeAccepted, "")
	}
	if n := f.sessions.Load(); n != 3 {
		t.Fatalf("%d connections for 5 messages at 2 per connection, want 3", n)
	}
}

func TestRefusedRecipientKeepsTheConnection(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{refuseRcpt: "nobody@example.net"})
	p := newProvider(t, f, smtp.Config{})
	bad := email(id(1))
	bad.Recipient = "nobody@example.net"
	wantOutcome(t, p.Send(context.Background(), bad), engine.OutcomePermanent, "smtp.550")
	wantOutcome(t, p.Send(context.Background(), email(id(2))), engine.OutcomeAccepted, "")
	if n := f.sessions.Load(); n != 1 {
		t.Fatalf("%d connections, want the refused transaction reset (RSET) and the connection reused", n)
	}
	if !strings.Contains(f.said(), "RSET") {
		t.Fatalf("no RSET after the refusal")
	}
}

func TestDroppedRestingConnectionIsReplaced(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{})
	p := newProvider(t, f, smtp.Config{})
	wantOutcome(t, p.Send(context.Background(), email(id(1))), engine.OutcomeAccepted, "")
	f.dropAll() // the relay hangs up on its idle client
	wantOutcome(t, p.Send(context.Background(), email(id(2))), engine.OutcomeAccepted, "")
	if n := f.sessions.Load(); n != 2 {
		t.Fatalf("%d connections, want a new one after the drop", n)
	}
	if n := len(f.got()); n != 2 {
		t.Fatalf("relay read %d messages, want 2", n)
	}
}

func TestIdleConnectionExpires(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC))
	f := newFar(t, farConfig{})
	p := newProvider(t, f, smtp.Config{Clock: clock, IdleTimeout: time.Minute})
	wantOutcome(t, p.Send(context.Background(), email(id(1))), engine.OutcomeAccepted, "")
	clock.Advance(59 * time.Second)
	wantOutcome(t, p.Send(context.Background(), email(id(2))), engine.OutcomeAccepted, "")
	if n := f.sessions.Load(); n != 1 {
		t.Fatalf("%d connections after a short rest, want 1", n)
	}
	clock.Advance(61 * time.Second)
	wantOutcome(t, p.Send(context.Background(), email(id(3))), engine.OutcomeAccepted, "")
	if n := f.sessions.Load(); n != 2 {
		t.Fatalf("%d connections after a rest past IdleTimeout, want 2", n)
	}
}

func TestConnectionIsNotReusedAfterMaybeSent(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	f := newFar(t, farConfig{onData: func(f *far, c *gosmtp.Conn, raw []byte) error {
		if n.Add(1) == 1 {
			return drop(f, c, raw)
		}
		return nil
	}})
	p := newProvider(t, f, smtp.Config{})
	wantOutcome(t, p.Send(context.Background(), email(id(1))), engine.OutcomeMaybeSent, smtp.CodeReplyLost)
	wantOutcome(t, p.Send(context.Background(), email(id(2))), engine.OutcomeAccepted, "")
	if n := f.sessions.Load(); n != 2 {
		t.Fatalf("%d connections, want a new one after the broken exchange", n)
	}
}

func TestCloseSaysQuitAndRefusesLaterSends(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{})
	p := newProvider(t, f, smtp.Config{})
	wantOutcome(t, p.Send(context.Background(), email(id(1))), engine.OutcomeAccepted, "")
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(f.said(), "QUIT") {
		t.Fatalf("Close did not say QUIT to the resting connection")
	}
	wantOutcome(t, p.Send(context.Background(), email(id(2))), engine.OutcomeTransient, smtp.CodeClosed)
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
