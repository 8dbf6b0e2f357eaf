package main

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMetricsCarryNoRecipient(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{dispatch: true})
	sender := e.token("case-system")
	a := e.do(request{method: "POST", path: "/v1/messages", token: sender, key: "m1", body: smsBody(nil)})
	if a.status != 202 {
		t.Fatalf("submit: %d %s", a.status, a.raw)
	}
	id := a.json(t)["id"].(string)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if v := e.do(request{method: "GET", path: "/v1/messages/" + id, token: sender}).json(t); v["status"] == "delivered" {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	text := e.scrapeMetrics(t)
	for _, want := range []string{
		`switchboard_http_requests_total{class="2xx",route="/v1/messages"}`,
		`switchboard_provider_attempts_total{outcome="accepted",provider="sms-gateway"} 1`,
		"switchboard_messages_accepted_total 1",
		`switchboard_queue_entries{dispatch="submitted"} 1`,
		"switchboard_provider_send_duration_seconds_bucket",
		"switchboard_dispatch_leases_lost_total 0",
		"switchboard_dispatch_claims_held",
		"go_goroutines",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	for _, leak := range []string{testPhone, "15550100123", id, "Riverside"} {
		if strings.Contains(text, leak) {
			t.Errorf("metrics expose %q", leak)
		}
	}
}

// scrapeMetrics reads the stack's /metrics as the metrics listener serves it.
func (e *apiEnv) scrapeMetrics(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(e.stack.metrics.handler(e.stack))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}
