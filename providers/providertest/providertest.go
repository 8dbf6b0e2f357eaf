package providertest

import (
	"context"
	"testing"
	"time"

	"switchboard/engine"
)

// Behaviour is how the far side treats every message sent to it.
type Behaviour string

const (
	// Accept: the far side takes the message (HTTP 2xx, SMTP 250 after DATA, a peer's
	// {"accepted": true}).
	Accept Behaviour = "accept"
	// Refuse: the far side definitely refuses it (HTTP 400, SMTP 550 to RCPT, a peer's
	// {"accepted": false}).
	Refuse Behaviour = "refuse"
	// DropAfterReceive: the far side reads the whole request, then breaks the connection
	// without answering.
	DropAfterReceive Behaviour = "drop-after-receive"
	// StallAfterReceive: the far side reads the whole request and never answers while the
	// sender waits (it lets go when the sender gives up or the test ends).
	StallAfterReceive Behaviour = "stall-after-receive"
	// Unreachable: nothing listens where the provider connects.
	Unreachable Behaviour = "unreachable"
)

// Far is a provider under test, connected to its far side.
type Far struct {
	// Provider is the provider under test. Exercise closes it.
	Provider engine.Provider
	// Received returns how many messages the far side has begun to receive. It may be nil,
	// which skips the checks that need it.
	Received func() int
}

// Harness tells Exercise how to build a provider for each behaviour of the far side.
type Harness struct {
	// Kind is the provider kind Kind() must return; empty accepts any non-empty kind.
	Kind string
	// New returns a fresh provider whose far side treats every message as b. It registers its
	// own cleanups on t (stopping the far side must release a stalled exchange).
	New func(t *testing.T, b Behaviour) Far
	// Outbound returns a message the provider can carry; nil means an SMS.
	Outbound func() *engine.Outbound
	// StallDeadline bounds the stalled send; zero means 500 ms.
	StallDeadline time.Duration
}

// Exercise runs the conformance suite as parallel subtests of t.
func Exercise(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("providertest: Harness.New is nil")
	}
	if h.Outbound == nil {
		h.Outbound = DefaultOutbound
	}
	if h.StallDeadline <= 0 {
		h.StallDeadline = 500 * time.Millisecond
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, h)
		})
	}
}

// DefaultOutbound is a first attempt of an SMS.
func DefaultOutbound() *engine.Outbound {
	return &engine.Outbound{
		MessageID:  "0190f5a0-0000-7000-8000-000000000001",
		Generation: 1,
		Attempt:    1,
		Channel:    engine.ChannelSMS,
		Recipient:  "+15550123",
		Parts:      map[string]string{"text": "Conformance check."},
		SenderProfile: engine.SenderProfileView{
			ID: "conformance", Channel: engine.ChannelSMS, Sender: "+15550100", MaximumSegments: 1,
		},
	}
}

type conformanceCase struct {
	name string
	run  func(t *testing.T, h Harness)
}

// cases is the suite, one entry per behaviour the engine relies on.
var cases = []conformanceCase{
	{"KindIsNamed", func(t *testing.T, h Harness) {
		far := open(t, h, Accept)
		kind := far.Provider.Kind()
		if kind == "" || (h.Kind != "" && kind != h.Kind) {
			t.Fatalf("Kind() = %q, want %q", kind, h.Kind)
		}
	}},
	{"CloseIsIdempotent", func(t *testing.T, h Harness) {
		far := h.New(t, Accept)
		if err := far.Provider.Close(); err != nil {
			t.Fatalf("first Close: %v", err)
		}
		if err := far.Provider.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	}},
	{"CancelledBeforeSendIsTransient", func(t *testing.T, h Harness) {
		far := open(t, h, Accept)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		o := far.Provider.Send(ctx, h.Outbound())
		wantClass(t, o, engine.OutcomeTransient)
		wantReceived(t, far, 0)
	}},
	{"AcceptedSend", func(t *testing.T, h Harness) {
		far := open(t, h, Accept)
		o := far.Provider.Send(context.Background(), h.Outbound())
		wantClass(t, o, engine.OutcomeAccepted)
		switch o.Report {
		case engine.ReportNone, engine.ReportSent, engine.ReportDelivered, engine.ReportUnavailable:
		default:
			t.Fatalf("accepted outcome carries report %q", o.Report)
		}
		wantReceived(t, far, 1)
	}},
	{"RefusalIsPermanentWithCode", func(t *testing.T, h Harness) {
		far := open(t, h, Refuse)
		o := far.Provider.Send(context.Background(), h.Outbound())
		wantClass(t, o, engine.OutcomePermanent)
		if o.Code == "" {
			t.Fatalf("permanent outcome without a code: %+v", o)
		}
	}},
	{"DropAfterReceiveIsMaybeSent", func(t *testing.T, h Harness) {
		far := open(t, h, DropAfterReceive)
		wantClass(t, far.Provider.Send(context.Background(), h.Outbound()), engine.OutcomeMaybeSent)
		wantReceived(t, far, 1)
	}},
	{"StallAfterReceiveIsMaybeSent", func(t *testing.T, h Harness) {
		far := open(t, h, StallAfterReceive)
		ctx, cancel := context.WithTimeout(context.Background(), h.StallDeadline)
		defer cancel()
		wantClass(t, far.Provider.Send(ctx, h.Outbound()), engine.OutcomeMaybeSent)
		wantReceived(t, far, 1)
	}},
	{"UnreachableIsTransient", func(t *testing.T, h Harness) {
		far := open(t, h, Unreachable)
		wantClass(t, far.Provider.Send(context.Background(), h.Outbound()), engine.OutcomeTransient)
	}},
}

// open builds a provider for b and closes it when the test ends.
func open(t *testing.T, h Harness, b Behaviour) Far {
	t.Helper()
	far := h.New(t, b)
	if far.Provider == nil {
		t.Fatalf("Harness.New(%s) returned no provider", b)
	}
	t.Cleanup(func() { _ = far.Provider.Close() })
	return far
}

func wantClass(t *testing.T, o engine.Outcome, class engine.OutcomeClass) {
	t.Helper()
	if o.Class != class {
		t.Fatalf("outcome %s (code %q, reason %q), want %s", o.Class, o.Code, o.Reason, class)
	}
}

func wantReceived(t *testing.T, far Far, n int) {
	t.Helper()
	if far.Received != nil {
		if got := far.Received(); got != n {
			t.Fatalf("far side received %d messages, want %d", got, n)
		}
	}
}
