package httpgw_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/providers/httpgw"
	"switchboard/providers/httpgw/mockgw"
)

const quickstartLikeAdapter = `
function prepare(message, profile) {
  return {target: "messages", headers: {"content-type": "application/json", "x-request-id": message.messageId},
    bodyFormat: "json", body: {to: message.recipient, from: profile.sender, text: message.parts.text, reference: message.messageId}};
}
function interpret(response) {
  if (response.status >= 200 && response.status < 300 && response.body !== null && typeof response.body === "object") {
    return {outcome: "accepted", providerReference: String(response.body.id)};
  }
  return null;
}
function receipt(request) {
  var b = request.json;
  if (b === null || typeof b !== "object") { return null; }
  return {providerReference: b.id, report: b.status};
}
`

// TestMockGatewayRoundTrip sends through the provider to the mock gateway and feeds the signed
// receipt it posts back through VerifyCallback and ParseReceipts, as serve's callback route does,
// with the inline adapter above and with examples/quickstart's adapter when it is present.
func TestMockGatewayRoundTrip(t *testing.T) {
	t.Parallel()
	t.Run("inline adapter", func(t *testing.T) {
		t.Parallel()
		roundTrip(t, quickstartLikeAdapter)
	})
	t.Run("examples/quickstart adapter", func(t *testing.T) {
		t.Parallel()
		source, err := os.ReadFile("../../examples/quickstart/providers/sms-gateway/adapter.js")
		if err != nil {
			t.Fatalf("the quickstart's adapter, part of the repository: %v", err)
		}
		roundTrip(t, string(source))
	})
}

func roundTrip(t *testing.T, adapter string) {
	secret := []byte("dev-callback-secret")
	var p *httpgw.Provider
	receipts := make(chan []engine.Receipt, 4)
	ready := make(chan struct{})
	callbacks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-ready
		body, _ := io.ReadAll(r.Body)
		if err := p.VerifyCallback(r, "", body); err != nil {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		got, err := p.ParseReceipts(r.Context(), r, body)
		if err != nil {
			w.WriteHeader(http.StatusUnprocessableEntity)
			return
		}
		receipts <- got
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(callbacks.Close)

	gw := mockgw.New(mockgw.Options{CallbackURL: callbacks.URL + "/v1/provider-callbacks/sms-gateway", CallbackSecret: secret, TimeoutAfterReceive: 0})
	base, err := gw.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	baseURL, _ := url.Parse(base)
	p, err = httpgw.New(httpgw.Config{
		ID: "sms-gateway", Source: adapter, RequestHeaders: []string{"content-type", "x-request-id"},
		ReceiptsCallback: true, BaseURL: baseURL, Auth: httpgw.Auth{Kind: httpgw.AuthNone},
		Verifier: &httpgw.VerifierConfig{Kind: httpgw.VerifierHMACSHA256Body, Header: "x-signature", Encoding: "hex", Secret: secret},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	close(ready)

	out := &engine.Outbound{MessageID: "msg-1", Generation: 1, Attempt: 1, Channel: engine.ChannelSMS, Recipient: "+15550123",
		Parts:         map[string]string{"text": "hello"},
		SenderProfile: engine.SenderProfileView{ID: "reminders-sms", Channel: engine.ChannelSMS, Sender: "+15550100", MaximumSegments: 3}}
	o := p.Send(context.Background(), out)
	if o.Class != engine.OutcomeAccepted || o.ProviderReference == "" || o.Report != engine.ReportNone {
		t.Fatalf("send: %+v", o)
	}
	got := <-receipts
	if len(got) != 1 || got[0].ProviderReference != o.ProviderReference || got[0].Report != engine.ReportDelivered {
		t.Fatalf("receipts %+v for reference %s", got, o.ProviderReference)
	}
	if gw.Seen("msg-1") != 1 {
		t.Fatalf("gateway saw msg-1 %d times", gw.Seen("msg-1"))
	}
}

// TestMockGatewayStallIsMaybeSent: a gateway that takes the message and never answers gives
// maybe-sent, and the gateway counts the message as seen.
func TestMockGatewayStallIsMaybeSent(t *testing.T) {
	t.Parallel()
	gw := mockgw.New(mockgw.Options{TimeoutAfterReceive: 1})
	base, err := gw.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	baseURL, _ := url.Parse(base)
	p, err := httpgw.New(httpgw.Config{ID: "sms-gateway", Source: quickstartLikeAdapter, RequestHeaders: []string{"content-type", "x-request-id"},
		BaseURL: baseURL, Timeout: 200 * time.Millisecond, Auth: httpgw.Auth{Kind: httpgw.AuthNone}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	out := &engine.Outbound{MessageID: "msg-2", Generation: 1, Attempt: 1, Channel: engine.ChannelSMS, Recipient: "+15550123",
		Parts: map[string]string{"text": "hello"}, SenderProfile: engine.SenderProfileView{ID: "p", Channel: engine.ChannelSMS, Sender: "+15550100"}}
	if o := p.Send(context.Background(), out); o.Class != engine.OutcomeMaybeSent || o.Code != httpgw.CodeTimeout {
		t.Fatalf("send: %+v", o)
	}
	if gw.Seen("msg-2") != 1 {
		t.Fatalf("gateway saw msg-2 %d times", gw.Seen("msg-2"))
	}
}
