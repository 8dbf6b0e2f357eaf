package peer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"testing"

	"github.com/libp2p/go-libp2p/core/network"

	"switchboard/engine"
)

// pair starts a receiver that listens and a sender that knows its address.
func pair(t *testing.T, editReceiver func(*Config)) (sender, receiver *node) {
	t.Helper()
	receiver = startNode(t, editReceiver)
	sender = startNode(t, func(c *Config) {
		c.Listen = nil
		c.AddressBook = map[string][]string{receiver.PeerID(): receiver.Addrs()}
	})
	return sender, receiver
}

func TestDirectDelivery(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, nil)
	out := peerOutbound(newMessageID(), receiver.PeerID(), "hello, peer")

	o := sender.Send(context.Background(), out)
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	if o.Report != engine.ReportDelivered {
		t.Fatalf("report %q, want delivered", o.Report)
	}
	entries, _ := receiver.inbox.snapshot()
	if len(entries) != 1 {
		t.Fatalf("inbox holds %d entries, want 1", len(entries))
	}
	e := entries[0]
	if e.From != sender.PeerID() || e.Protocol != DefaultProtocol || e.MessageID != out.MessageID ||
		string(e.Payload) != "hello, peer" || e.TsMs != uint64(testNow.UnixMilli()) || !e.ReceivedAt.Equal(testNow) {
		t.Fatalf("inbox entry %+v does not match what was sent", e)
	}
	if o.ProviderReference != e.ID {
		t.Fatalf("provider reference %q, want the inbox id %q", o.ProviderReference, e.ID)
	}
	var ack struct {
		Accepted bool   `json:"accepted"`
		InboxID  string `json:"inboxId"`
	}
	if err := json.Unmarshal(e.Response, &ack); err != nil || !ack.Accepted || ack.InboxID != e.ID {
		t.Fatalf("stored response %s is not the acknowledgement of %s", e.Response, e.ID)
	}
}

func TestSameEnvelopeTwiceDeliversOnce(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, nil)
	out := peerOutbound(newMessageID(), receiver.PeerID(), "once")

	first := sender.Send(context.Background(), out)
	second := sender.Send(context.Background(), out)
	wantOutcome(t, first, engine.OutcomeAccepted, "")
	wantOutcome(t, second, engine.OutcomeAccepted, "")
	entries, puts := receiver.inbox.snapshot()
	if len(entries) != 1 || puts != 2 {
		t.Fatalf("inbox holds %d entries after %d puts, want 1 after 2", len(entries), puts)
	}
	if second.ProviderReference != first.ProviderReference || second.Report != engine.ReportDelivered {
		t.Fatalf("second answer %+v is not the cached first answer %+v", second, first)
	}
}

func TestConcurrentDuplicatesDeliverOnce(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, nil)
	out := peerOutbound(newMessageID(), receiver.PeerID(), "racing")
	const n = 8
	outcomes := make([]engine.Outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { outcomes[i] = sender.Send(context.Background(), out) })
	}
	wg.Wait()
	entries, _ := receiver.inbox.snapshot()
	if len(entries) != 1 {
		t.Fatalf("inbox holds %d entries, want 1", len(entries))
	}
	for _, o := range outcomes {
		wantOutcome(t, o, engine.OutcomeAccepted, "")
		if o.ProviderReference != entries[0].ID {
			t.Fatalf("answer %+v does not name the one inbox entry %s", o, entries[0].ID)
		}
	}
}

func TestDuplicateWithoutKeptResponseAnswersResponseGone(t *testing.T) {
	t.Parallel()
	_, receiver := pair(t, nil)
	receiver.inbox.dropResponses = true
	h := rawHost(t, nil, false)
	env := AppendEnvelope(nil, Envelope{MessageID: newMessageID(), Version: 1, TsMs: 7, Payload: []byte("x")})

	answers := [][]byte{roundTrip(t, h, receiver, env), roundTrip(t, h, receiver, env)}
	if !bytes.HasPrefix(answers[0], []byte(`{"accepted":true,"inboxId":"`)) {
		t.Fatalf("first answer %q, want the acknowledgement", answers[0])
	}
	if string(answers[1]) != ResponseGone {
		t.Fatalf("second answer %q, want %s", answers[1], ResponseGone)
	}
	if o := classifyAnswer(answers[1]); o.Class != engine.OutcomeAccepted || o.Report != engine.ReportDelivered {
		t.Fatalf("RESPONSE_GONE classifies as %+v, want accepted/delivered", o)
	}
}

func TestWireBytesDecodeToTheMessage(t *testing.T) {
	t.Parallel()
	// The far side is a bare host that records the raw bytes it receives.
	far := rawHost(t, nil, true)
	got := make(chan []byte, 1)
	far.SetStreamHandler(DefaultProtocol, func(s network.Stream) {
		b, _ := io.ReadAll(s)
		got <- b
		_, _ = s.Write([]byte(`{"accepted":true,"inboxId":"far-1"}`))
		_ = s.Close()
	})
	sender := startNode(t, func(c *Config) {
		c.Listen = nil
		c.AddressBook = map[string][]string{far.ID().String(): hostAddrs(far)}
	})
	out := peerOutbound(newMessageID(), far.ID().String(), "payload bytes")
	o := sender.Send(context.Background(), out)
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	if o.ProviderReference != "far-1" {
		t.Fatalf("provider reference %q, want far-1", o.ProviderReference)
	}
	env, err := DecodeEnvelope(<-got)
	if err != nil {
		t.Fatal(err)
	}
	if env.MessageID != out.MessageID || env.Version != 1 || string(env.Payload) != "payload bytes" ||
		env.TsMs != uint64(testNow.UnixMilli()) {
		t.Fatalf("wire envelope %+v does not carry the message", env)
	}
}

func TestSendRefusesWhatCannotBeSent(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, nil)
	big := string(make([]byte, MaxEnvelopeBytes))
	for name, c := range map[string]struct {
		out  *engine.Outbound
		code string
	}{
		"not a peer id": {peerOutbound(newMessageID(), "+15550123", "x"), CodeInvalidRecipient},
		"self":          {peerOutbound(newMessageID(), sender.PeerID(), "x"), CodeInvalidRecipient},
		"too large":     {peerOutbound(newMessageID(), receiver.PeerID(), big), CodeTooLarge},
		"no message id": {peerOutbound("", receiver.PeerID(), "x"), CodeInvalidMessageID},
	} {
		t.Run(name, func(t *testing.T) {
			wantOutcome(t, sender.Send(context.Background(), c.out), engine.OutcomePermanent, c.code)
		})
	}
	if entries, puts := receiver.inbox.snapshot(); len(entries) != 0 || puts != 0 {
		t.Fatalf("the receiver got %d puts", puts)
	}
}

func TestSendAfterCloseIsTransient(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, nil)
	if err := sender.Close(); err != nil {
		t.Fatal(err)
	}
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "late"))
	wantOutcome(t, o, engine.OutcomeTransient, CodeClosed)
}

func TestPeerWithoutTheProtocolIsTransient(t *testing.T) {
	t.Parallel()
	sender, receiver := pair(t, func(c *Config) { c.Inbox = nil }) // registers no handler
	o := sender.Send(context.Background(), peerOutbound(newMessageID(), receiver.PeerID(), "x"))
	wantOutcome(t, o, engine.OutcomeTransient, CodeProtocolUnsupported)
}
