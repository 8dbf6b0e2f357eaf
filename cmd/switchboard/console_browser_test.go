package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/auth"
	"switchboard/store"
)

// browserTestDir holds the Node project that drives the console (package.json and its lock).
var browserTestDir = filepath.Join("testdata", "console")

// requireBrowser finds Chromium, node and playwright-core. When one is missing the test fails
// under SWITCHBOARD_REQUIRE_BROWSER=1 (CI) and skips, saying why, otherwise.
func requireBrowser(t *testing.T) (node, chromium string) {
	t.Helper()
	chromium = os.Getenv("CHROMIUM")
	if chromium == "" {
		chromium = "/usr/bin/chromium"
	}
	var missing []string
	if _, err := os.Stat(chromium); err != nil {
		missing = append(missing, chromium+" (apt-get install chromium)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing = append(missing, "node (apt-get install nodejs)")
	}
	if _, err := os.Stat(filepath.Join(browserTestDir, "node_modules", "playwright-core", "package.json")); err != nil {
		missing = append(missing, "playwright-core (npm ci in cmd/switchboard/testdata/console)")
	}
	if len(missing) > 0 {
		msg := "the browser test needs " + strings.Join(missing, ", ")
		if os.Getenv("SWITCHBOARD_REQUIRE_BROWSER") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg + "; set SWITCHBOARD_REQUIRE_BROWSER=1 to make this a failure")
	}
	return node, chromium
}

// artifactsDir is where the browser test keeps its screenshots: SWITCHBOARD_ARTIFACTS, or
// cmd/switchboard/testdata/console/artifacts (ignored by git).
func artifactsDir(t *testing.T) string {
	if d := os.Getenv("SWITCHBOARD_ARTIFACTS"); d != "" {
		return d
	}
	d, err := filepath.Abs(filepath.Join(browserTestDir, "artifacts"))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// seedForConsole writes held and failed messages into the running stack's database through a
// store of its own, the way the dispatcher would: accepted not due for an hour (so that the
// stack's dispatcher leaves them alone), then claimed and finished at that hour.
func seedForConsole(t *testing.T, dbPath string, auditKey []byte, held, failed int) (heldIDs []string) {
	t.Helper()
	ctx := context.Background()
	chain, _, err := auditKeys(auditKey)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, store.Config{Path: dbPath, AuditKey: chain})
	if err != nil {
		t.Fatalf("open the dev database: %v", err)
	}
	defer st.Close()
	now := time.Now().UTC().Add(-time.Minute)
	later := now.Add(time.Hour)
	accept := func(prefix string, n int) []string {
		var ids []string
		for len(ids) < n {
			var batch []engine.Acceptance
			for len(ids)+len(batch) < n && len(batch) < 500 {
				id := fmt.Sprintf("0190f5a0-%s-7000-8000-%012d", prefix, len(ids)+len(batch))
				batch = append(batch, engine.Acceptance{
					Idempotency: engine.IdempotencyRecord{Issuer: "seed", Subject: "seed", Key: "key-" + id,
						RequestHash: []byte(id), Response: []byte(`{}`), ExpiresAt: now.Add(24 * time.Hour)},
					Message: engine.Message{ID: id, Dispatch: engine.DispatchQueued, Report: engine.ReportNone,
						Channel: engine.ChannelSMS, SenderProfile: "reminders-sms", Provider: "sms-gateway", RecipientKind: "phone",
						TemplateID: "appointment-reminder-sms", TemplateVersion: "1", Locale: "en", AccessProfile: "case-notices",
						Caller: "caller:seed", AcceptedAt: now, UpdatedAt: now, NextAttemptAt: later, ExpiresAt: now.Add(24 * time.Hour), Generation: 1},
					Payload: engine.Payload{Recipient: testPhone, Parts: map[string]string{"text": "Riverside Clinic, tomorrow at 09:30"}},
					Audit:   engine.AuditEntry{Event: "message.accepted", Actor: "caller:seed", MessageID: id, Outcome: "queued", At: now},
				})
			}
			for _, r := range st.Accept(ctx, batch) {
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				ids = append(ids, r.MessageID)
			}
		}
		return ids
	}
	finish := func(outcome engine.AttemptOutcome, d engine.Dispatch, code string) {
		for {
			p, err := st.ClaimPage(ctx, later, engine.PageLimits{MaxEntries: 500, MaxBytes: 1 << 30}, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Claims) == 0 {
				return
			}
			for _, c := range p.Claims {
				if err := st.Finish(ctx, engine.Finish{Lease: c.Lease, Attempt: outcome, Code: code, Dispatch: d,
					Reason: engine.Reason{Code: code, By: engine.ReasonByProvider}, Report: engine.ReportNone, Provider: c.Message.Provider, ProviderAttempts: 1, FinishedAt: later,
					NextAttemptAt: later, Audit: engine.AuditEntry{Event: "attempt.finished", Actor: "worker",
						MessageID: c.Message.ID, Outcome: string(outcome), At: later}}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	heldIDs = accept("0001", held)
	finish(engine.AttemptMaybeSent, engine.DispatchUnknown, "gateway.timeout")
	accept("0002", failed)
	finish(engine.AttemptPermanent, engine.DispatchFailed, "gateway.rejected")
	return heldIDs
}

// TestConsoleInBrowser signs in to the console of a real `switchboard dev` in headless
// Chromium through the dev issuer, settles a held message, runs a bulk retry and follows its
// progress, sees an expired session go back to sign-in and a sender's token refused, and keeps
// a screenshot of each main page (see artifactsDir).
func TestConsoleInBrowser(t *testing.T) {
	node, chromium := requireBrowser(t)
	dir := quickstartCopy(t)
	dev := startDev(t, dir)
	if dev.session.Console == "" {
		t.Fatalf("session.json names no console: %+v", dev.session)
	}
	layout := devLayout(dir)
	key, err := os.ReadFile(filepath.Join(layout.secrets, "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	const failed, heldCount = 1200, 3
	held := seedForConsole(t, layout.dbPath, key, heldCount, failed)

	resp, err := http.Get(dev.session.Console)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Fatalf("console CSP %q", csp)
	}

	iss, err := auth.LoadDevIssuer(layout.issuerKeyPath, dev.session.Issuer, devAudience)
	if err != nil {
		t.Fatal(err)
	}
	expired, err := iss.Mint("operations-console", []string{"messaging:operate"}, time.Hour, time.Now().Add(-2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "console.test.mjs")
	cmd.Dir = browserTestDir
	cmd.Env = append(os.Environ(), "CONSOLE_URL="+dev.session.Console, "ARTIFACTS="+artifactsDir(t), "CHROMIUM="+chromium,
		"HELD_ID="+held[0], fmt.Sprintf("FAILED_COUNT=%d", failed), fmt.Sprintf("HELD_COUNT=%d", heldCount), "EXPIRED_TOKEN="+expired,
		"OPERATOR_CLIENT=operations-console", "SENDER_CLIENT=case-system")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	steps := map[string]map[string]any{}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		t.Log(sc.Text())
		var s map[string]any
		if json.Unmarshal(sc.Bytes(), &s) == nil {
			steps[fmt.Sprint(s["step"])] = s
		}
	}
	if err := cmd.Wait(); err != nil || steps["done"] == nil {
		t.Fatalf("the browser test failed (%v); screenshots in %s\n%s", err, artifactsDir(t), stderr.String())
	}
	// What the browser saw happened in the database too.
	operator := dev.token("operations-console")
	dev.waitStatus(operator, held[0], 10*time.Second, "submitted")
	var list struct {
		Messages []map[string]any `json:"messages"`
	}
	if r, raw := dev.do("GET", "/v1/messages?status=failed&limit=10", operator, "", nil, &list); r.StatusCode != 200 || len(list.Messages) != 0 {
		t.Fatalf("failed messages left after the bulk retry: %d %s", r.StatusCode, raw)
	}
}
