package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine/auth"
	"switchboard/providers/httpgw/mockgw"
)

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestCrashesLoseNothing is issue 5's reliability run: 2,000 SMS through a gateway that refuses
// 30% transiently and takes 5% without ever answering, while serve is SIGKILLed three times.
// Every accepted message must end delivered, failed or unknown; the gateway may have taken a
// message twice only if that message ended unknown.
func TestCrashesLoseNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("long reliability run: runs without -short")
	}
	t.Parallel()
	const total = 2000
	dir := quickstartCopy(t)
	manifest := filepath.Join(dir, "switchboard.yaml")
	b, _ := os.ReadFile(manifest)
	fast := strings.Replace(string(b), "retry: {maximumAttempts: 5, initialDelaySeconds: 30, maximumDelaySeconds: 3600}",
		"retry: {maximumAttempts: 10, initialDelaySeconds: 1, maximumDelaySeconds: 2}", 1)
	if fast == string(b) {
		t.Fatal("could not shorten the retry policy")
	}
	if err := os.WriteFile(manifest, []byte(fast), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg, layout, api := serveFixture(t, dir)
	gw := mockgw.New(mockgw.Options{CallbackURL: api + "/v1/provider-callbacks/sms-gateway", CallbackSecret: layout.callbackSecret,
		FailTransient: 0.30, TimeoutAfterReceive: 0.05, Seed: 7, ReceiptDelay: 20 * time.Millisecond,
		ReceiptAttempts: 40, ReceiptRetryDelay: 100 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)})
	gwURL, err := gw.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	session := devSession{API: api, Gateways: oneMockForAll(pkg, gwURL), Clients: clientsOf(pkg)}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		t.Fatal(err)
	}
	rt, _ := os.ReadFile(layout.runtimePath)
	// The SMS gateway's entry (the package has other http providers): a short timeout, so that a
	// request the gateway never answers becomes maybe-sent quickly.
	rtText := strings.Replace(string(rt), "    sms-gateway:\n", "    sms-gateway:\n        timeoutMilliseconds: 400\n", 1)
	if rtText == string(rt) {
		t.Fatal("could not set the SMS gateway's timeout")
	}
	rtText = strings.Replace(rtText, "metrics: 127.0.0.1:0", `metrics: ""`, 1)
	if err := os.WriteFile(layout.runtimePath, []byte(rtText), 0o600); err != nil {
		t.Fatal(err)
	}
	proc := &scaleInstance{tb: t, bin: binary, runtime: layout.runtimePath, logs: &syncBuffer{}}
	proc.start()
	defer func() {
		proc.kill()
		if t.Failed() {
			t.Logf("serve logs (tail):\n%s", tail(proc.logs.String(), 20000))
		}
	}()
	issuer, err := auth.LoadDevIssuer(layout.issuerKeyPath, devIssuer, devAudience)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := issuer.Mint("case-system", []string{"messaging:send"}, 2*time.Hour, time.Now())
	body, _ := json.Marshal(smsBody(nil))
	client := &http.Client{Timeout: 10 * time.Second}

	load := crashLoad{client: client, api: api, token: token, keyPrefix: "crash-", body: body}
	accepted, wait := load.start(total, 16)
	for _, at := range []int64{total / 4, total / 2, 3 * total / 4} {
		for accepted.Load() < at {
			time.Sleep(10 * time.Millisecond)
		}
		proc.kill()
		proc.start()
	}
	ids := wait(t)

	operator, _ := issuer.Mint("operations-console", []string{"messaging:operate"}, 2*time.Hour, time.Now())
	// Wait until nothing is queued or sending, then read each message's final status.
	deadline := time.Now().Add(4 * time.Minute)
	for time.Now().Before(deadline) {
		if q, s := queueDepth(client, api, operator); q == 0 && s == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	final := map[string]bool{"delivered": true, "failed": true, "unknown": true}
	status := map[string]string{}
	for time.Now().Before(deadline) && len(status) < total {
		for _, id := range ids {
			if !final[status[id]] {
				if st := messageStatus(t, client, api, operator, id); final[st] {
					status[id] = st
				}
			}
		}
		if len(status) < total {
			time.Sleep(200 * time.Millisecond)
		}
	}
	counts := map[string]int{}
	for _, id := range ids {
		st := status[id]
		if st == "" {
			st = messageStatus(t, client, api, operator, id)
			t.Errorf("message %s ended %q, not delivered, failed or unknown", id, st)
		}
		counts[st]++
		if seen := gw.Seen(id); seen > 1 && st != "unknown" {
			t.Errorf("the gateway took message %s %d times, and it ended %s", id, seen, st)
		}
	}
	t.Logf("outcomes: %v; gateway: %+v", counts, gw.Stats())
	if counts["delivered"] < total*8/10 {
		t.Errorf("only %d of %d delivered", counts["delivered"], total)
	}
}

// queueDepth reads the queued and sending counts from GET /v1/slo (-1 when unreachable).
func queueDepth(client *http.Client, api, token string) (int64, int64) {
	req, _ := http.NewRequest("GET", api+"/v1/slo", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return -1, -1
	}
	defer resp.Body.Close()
	var v struct{ Dispatch map[string]int64 }
	if json.NewDecoder(resp.Body).Decode(&v) != nil {
		return -1, -1
	}
	return v.Dispatch["queued"], v.Dispatch["sending"]
}

func messageStatus(t *testing.T, client *http.Client, api, token, id string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", api+"/v1/messages/"+id, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var v struct{ Status string }
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v.Status
}
