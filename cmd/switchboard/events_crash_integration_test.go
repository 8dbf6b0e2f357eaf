package main

import (
	"crypto/sha256"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine/auth"
	"switchboard/engine/stdwebhook"
	"switchboard/engine/webhooks"
	"switchboard/engine/webhooks/receiver"
	"switchboard/providers/httpgw/mockgw"
)

// TestEventsSurviveSIGKILL SIGKILLs serve in the middle of a burst of events, twice: after the
// restarts every message's final event still reaches the endpoint (at least once), and every
// event that arrived more than once carried its original webhook-id and the very same body, as
// only the deliveries in flight at a kill may.
func TestEventsSurviveSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("long reliability run: runs without -short")
	}
	t.Parallel()
	const total = 600
	dir := quickstartCopy(t)
	pkg, layout, api := serveFixture(t, dir)
	gw := mockgw.New(mockgw.Options{CallbackURL: api + "/v1/provider-callbacks/sms-gateway", CallbackSecret: layout.callbackSecret,
		ReceiptDelay: 20 * time.Millisecond, ReceiptAttempts: 40, ReceiptRetryDelay: 100 * time.Millisecond,
		Logger: slog.New(slog.DiscardHandler)})
	gwURL, err := gw.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()

	secret, err := os.ReadFile(filepath.Join(layout.secrets, devWebhookSecret))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := stdwebhook.DecodeSecret(string(secret))
	var mu sync.Mutex
	bodies := map[string][32]byte{} // webhook-id -> body hash of its first delivery
	firstBody := map[string]string{}
	statuses := map[string]map[string]bool{} // message -> the statuses its events carried
	deliveries, mismatched := 0, 0
	rc := receiver.New(receiver.Options{Key: key, Keep: 1, OnEvent: func(ev receiver.Event) {
		var d struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		_ = json.Unmarshal(ev.Data, &d)
		sum := sha256.Sum256(append([]byte(ev.Type+ev.Timestamp.String()), ev.Data...))
		mu.Lock()
		defer mu.Unlock()
		deliveries++
		if first, seen := bodies[ev.ID]; seen && first != sum {
			mismatched++
			t.Logf("webhook-id %s came with another body:\n%s\n%s %s", ev.ID, firstBody[ev.ID], ev.Timestamp, ev.Data)
		} else if !seen {
			bodies[ev.ID] = sum
			firstBody[ev.ID] = ev.Timestamp.String() + " " + string(ev.Data)
		}
		if statuses[d.ID] == nil {
			statuses[d.ID] = map[string]bool{}
		}
		statuses[d.ID][d.Status] = true
	}})
	rcvURL, err := rc.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	session := devSession{API: api, Gateways: oneMockForAll(pkg, gwURL), Clients: clientsOf(pkg),
		WebhookReceiver: &devReceiver{URL: rcvURL, Endpoint: devWebhookEndpoint}}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		t.Fatal(err)
	}
	rt, _ := os.ReadFile(layout.runtimePath)
	rtText := strings.Replace(string(rt), "metrics: 127.0.0.1:0", `metrics: ""`, 1)
	if err := os.WriteFile(layout.runtimePath, []byte(rtText), 0o600); err != nil {
		t.Fatal(err)
	}
	proc := &scaleInstance{tb: t, bin: binary, runtime: layout.runtimePath, api: api, logs: &syncBuffer{}}
	proc.start()
	defer func() {
		proc.kill()
		if t.Failed() {
			t.Logf("serve logs (tail):\n%s", tail(proc.logs.String(), 20000))
		}
	}()
	proc.waitReady(60 * time.Second)
	issuer, err := auth.LoadDevIssuer(layout.issuerKeyPath, devIssuer, devAudience)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := issuer.Mint("case-system", []string{"messaging:send"}, 2*time.Hour, time.Now())
	body, _ := json.Marshal(smsBody(nil))
	client := &http.Client{Timeout: 10 * time.Second}
	load := crashLoad{client: client, api: api, token: token, keyPrefix: "ev-crash-", body: body}
	_, wait := load.start(total, 8)
	for _, at := range []int{total / 3, 2 * total / 3} {
		for {
			mu.Lock()
			n := deliveries
			mu.Unlock()
			if n >= at {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		proc.kill() // in the middle of a burst of deliveries
		proc.start()
	}
	ids := wait(t)
	// Once nothing is queued or sending, each message's final status must reach the endpoint
	// (messages sending at a kill end unknown, held for an operator; their event says so).
	operator, _ := issuer.Mint("operations-console", []string{"messaging:operate"}, 2*time.Hour, time.Now())
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if q, s := queueDepth(client, api, operator); q == 0 && s == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	want := map[string]string{}
	for _, id := range ids {
		for want[id] == "" && time.Now().Before(deadline) {
			// The sender reads its own messages (the operator profile's rate limit is low).
			if want[id] = messageStatus(t, client, api, token, id); want[id] == "" {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	missing := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for id, st := range want {
			if !statuses[id][st] {
				out = append(out, id+" "+st)
			}
		}
		return out
	}
	for len(missing()) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	for _, m := range missing() {
		t.Errorf("the event of the final status never arrived: %s", m)
	}
	mu.Lock()
	defer mu.Unlock()
	st := rc.Stats()
	if mismatched != 0 {
		t.Errorf("%d deliveries reused a webhook-id with another body", mismatched)
	}
	// Only deliveries in flight at a kill may come twice: at most the rows one endpoint holds
	// (8 per worker, 16 workers by default), per kill.
	if limit := 2 * 8 * webhooks.DefaultConcurrency; st.Duplicates > limit {
		t.Errorf("%d duplicate deliveries after two kills, more than could have been in flight", st.Duplicates)
	}
	t.Logf("%d deliveries, %d distinct events, %d duplicates (each with its original webhook-id and body), %d refused",
		st.Received, st.Distinct, st.Duplicates, st.Refused)
	if st.Refused != 0 {
		t.Errorf("%d deliveries failed the signature check", st.Refused)
	}
}
