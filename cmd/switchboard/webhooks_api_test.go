package main

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/webhooks/receiver"
)

// TestWebhookMetricsAndInboxProviders: the metrics listener shows each endpoint's deliveries by
// outcome, its pending events and the delivery lag; a receiver whose profile lists
// inboxProviders reads only those providers' entries, an operator every entry.
func TestWebhookMetricsAndInboxProviders(t *testing.T) {
	t.Parallel()
	var rc *receiver.Receiver
	front := httptest.NewServer(nil)
	t.Cleanup(front.Close)
	e := newAPIEnv(t, envOptions{dispatch: true, webhookURL: front.URL + "/",
		edit: map[string]func(string) string{"switchboard.yaml": func(s string) string {
			return strings.Replace(s, "    clients: [inbox-reader]\n", "    clients: [inbox-reader]\n    inboxProviders: [peers]\n", 1)
		}}})
	rc = receiver.New(receiver.Options{Key: e.webhookKey()})
	front.Config.Handler = rc

	sender := e.token("case-system")
	a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "wh-1", body: smsBody(nil)})
	if a.status != 202 {
		t.Fatalf("submit: %d %s", a.status, a.raw)
	}
	deadline := time.Now().Add(20 * time.Second)
	for rc.Stats().Distinct == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if st := rc.Stats(); st.Distinct == 0 || st.Refused != 0 {
		t.Fatalf("receiver stats %+v", st)
	}
	srv := httptest.NewServer(e.stack.metrics.handler(e.stack))
	defer srv.Close()
	wants := []string{
		`switchboard_webhook_deliveries_total{endpoint="dev-receiver",outcome="delivered"}`,
		`switchboard_webhook_delivery_lag_seconds_bucket{endpoint="dev-receiver"`,
		`switchboard_webhook_events_pending{endpoint="dev-receiver"}`,
	}
	// The outcome is recorded (and observed) just after the receiver answered: scrape until
	// every series is there, since a scrape may fall between two of them.
	var missing []string
	for {
		resp, err := srv.Client().Get(srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		missing = missing[:0]
		for _, want := range wants {
			if !strings.Contains(string(body), want) {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, want := range missing {
		t.Errorf("metrics lack %s", want)
	}

	if _, err := e.stack.store.PutInbound(context.Background(), "sms-gateway", engine.ChannelSMS,
		[]engine.InboundItem{{From: "+15550100123", Text: "YES", ProviderReference: "in-1"}}); err != nil {
		t.Fatal(err)
	}
	reader := e.do(request{method: "GET", path: "/v1/inbox", token: e.token("inbox-reader")})
	if reader.status != 200 || len(reader.json(t)["entries"].([]any)) != 0 {
		t.Fatalf("a receiver of peers only reads %d %s", reader.status, reader.raw)
	}
	op := e.do(request{method: "GET", path: "/v1/inbox", token: e.token("operations-console")})
	if op.status != 200 || len(op.json(t)["entries"].([]any)) != 1 {
		t.Fatalf("an operator reads %d %s", op.status, op.raw)
	}
}
