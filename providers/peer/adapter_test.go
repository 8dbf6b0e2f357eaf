package peer

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"switchboard/engine"
)

// dkgAdapter shapes the bytes a DKG-style application protocol expects and reads its answers.
const dkgAdapter = `
function prepare(message, profile) {
  if (message.parts.body === "throw") { throw new Error("cannot shape this"); }
  if (message.parts.body === "bad base64") { return {payload: "%%%", payloadEncoding: "base64"}; }
  if (message.parts.body === "bad protocol") { return {payload: "x", protocol: "no slash"}; }
  if (message.parts.body === "no payload") { return {protocol: "/dkg/10.0.1/message"}; }
  return {
    payload: encoding.base64.encode(profile.id + "|" + message.messageId + "|" + message.parts.body),
    payloadEncoding: "base64",
    protocol: "/dkg/10.0.1/message"
  };
}
function interpret(response) {
  if (response.text === "broken") { throw new Error("unreadable"); }
  if (!response.json) { return null; }
  if (response.json.status === "ok") { return {outcome: "accepted", providerReference: response.json.ref}; }
  if (response.json.status === "busy") { return {outcome: "transient", code: "dkg.busy", retryAfter: 30}; }
  return {outcome: "permanent", code: "dkg." + response.json.status};
}
`

// dkgFar is a bare host speaking /dkg/10.0.1/message that answers each envelope with answer
// and hands the envelope it read to got.
func dkgFar(t *testing.T, answer string) (addrs []string, id string, got chan Envelope) {
	t.Helper()
	h := rawHost(t, nil, true)
	got = make(chan Envelope, 1)
	h.SetStreamHandler("/dkg/10.0.1/message", func(s network.Stream) {
		b, _ := io.ReadAll(s)
		if env, err := DecodeEnvelope(b); err == nil {
			got <- env
		}
		_, _ = s.Write([]byte(answer))
		_ = s.Close()
	})
	return hostAddrs(h), h.ID().String(), got
}

func adapterSender(t *testing.T, id string, addrs []string) *node {
	t.Helper()
	return startNode(t, func(c *Config) {
		c.Listen = nil
		c.Source, c.ScriptName = dkgAdapter, "providers/dkg/adapter.js"
		c.AddressBook = map[string][]string{id: addrs}
	})
}

func TestAdapterShapesPayloadAndProtocol(t *testing.T) {
	t.Parallel()
	addrs, id, got := dkgFar(t, `{"status":"ok","ref":"dkg-7"}`)
	sender := adapterSender(t, id, addrs)
	out := peerOutbound(newMessageID(), id, "knowledge asset")
	o := sender.Send(context.Background(), out)
	if o.Class != engine.OutcomeAccepted || o.Report != engine.ReportDelivered || o.ProviderReference != "dkg-7" {
		t.Fatalf("outcome %+v, want accepted/delivered with reference dkg-7", o)
	}
	select {
	case env := <-got:
		if want := "peer-profile|" + out.MessageID + "|knowledge asset"; string(env.Payload) != want || env.MessageID != out.MessageID {
			t.Fatalf("envelope %+v, want payload %q", env, want)
		}
	case <-time.After(testWait):
		t.Fatal("the far side got no envelope")
	}
}

func TestAdapterInterpretsAnswers(t *testing.T) {
	t.Parallel()
	for answer, want := range map[string]engine.Outcome{
		`{"status":"busy"}`:     {Class: engine.OutcomeTransient, Code: "dkg.busy", RetryAfter: 30 * time.Second},
		`{"status":"rejected"}`: {Class: engine.OutcomePermanent, Code: "dkg.rejected"},
		`plain text`:            {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		`{"accepted":false}`:    {Class: engine.OutcomePermanent, Code: "dkg.undefined"},
		ResponseGone:            {Class: engine.OutcomeAccepted, Report: engine.ReportDelivered},
		`broken`:                {Class: engine.OutcomeMaybeSent, Code: "script.failed"},
	} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			addrs, id, _ := dkgFar(t, answer)
			o := adapterSender(t, id, addrs).Send(context.Background(), peerOutbound(newMessageID(), id, "x"))
			o.Reason = ""
			if o != want {
				t.Fatalf("outcome %+v, want %+v", o, want)
			}
		})
	}
}

func TestAdapterPrepareRefusals(t *testing.T) {
	t.Parallel()
	addrs, id, got := dkgFar(t, `{"status":"ok"}`)
	sender := adapterSender(t, id, addrs)
	for body, code := range map[string]string{
		"throw":        "script.failed",
		"bad base64":   CodePayloadInvalid,
		"bad protocol": CodePayloadInvalid,
		"no payload":   "script.output-invalid",
	} {
		o := sender.Send(context.Background(), peerOutbound(newMessageID(), id, body))
		if o.Class != engine.OutcomePermanent || o.Code != code {
			t.Errorf("%s: outcome %+v, want permanent %s", body, o, code)
		}
	}
	if len(got) != 0 {
		t.Fatal("a refused prepare still sent an envelope")
	}
}

func TestAdapterThatDoesNotCompileIsRefused(t *testing.T) {
	t.Parallel()
	for name, src := range map[string]string{
		"syntax":     "function prepare( {",
		"no prepare": "function interpret(r) { return null; }",
	} {
		if p, err := New(Config{ID: "peers", IdentityKey: newKey(t), Source: src, ScriptName: "adapter.js"}); err == nil {
			_ = p.Close()
			t.Errorf("%s: New accepted the adapter", name)
		}
	}
}
