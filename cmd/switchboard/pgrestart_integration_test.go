package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/providers/httpgw/mockgw"
	"switchboard/store/pgtest"
)

// The PostgreSQL fault test restarts its server, so it runs on a cluster of its own, never on
// the one the other tests share (go test runs packages in parallel). .ci/run creates it and
// sets both variables; without them the test skips, unless SWITCHBOARD_REQUIRE_FAULT_CLUSTER=1.
const (
	// envFaultURL is the fault cluster's URL (postgres://…).
	envFaultURL = "SWITCHBOARD_TEST_FAULT_POSTGRES_URL"
	// envFaultCluster names it for pg_ctlcluster: "VERSION NAME", e.g. "15 faults".
	envFaultCluster = "SWITCHBOARD_TEST_FAULT_POSTGRES_CLUSTER"
	// envRequireFault makes a missing fault cluster a failure (CI sets it).
	envRequireFault = "SWITCHBOARD_REQUIRE_FAULT_CLUSTER"
)

// TestPostgresRestartMidRun stops the PostgreSQL server under three serve instances while
// messages are submitted and delivered, checks that every instance's /ready answers 503 while
// it is gone, starts it again, and checks that every instance reconnects by itself and that
// every accepted message ends sent once (delivered), or unknown (it was in flight, and the
// gateway took it at most once): none is lost, none is taken twice.
func TestPostgresRestartMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("long fault run: runs without -short")
	}
	base, cluster := os.Getenv(envFaultURL), strings.Fields(os.Getenv(envFaultCluster))
	if base == "" || len(cluster) != 2 {
		if os.Getenv(envRequireFault) == "1" {
			t.Fatalf("%s=1 but %s and %s (\"VERSION NAME\") are not both set", envRequireFault, envFaultURL, envFaultCluster)
		}
		t.Skipf("needs a PostgreSQL cluster of its own, which it stops and starts: set %s to its URL and %s to its pg_ctlcluster \"VERSION NAME\" (.ci/run creates one)", envFaultURL, envFaultCluster)
	}
	t.Parallel()
	ctl := func(action string) {
		t.Helper()
		out, err := exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", cluster[0], cluster[1], action).CombinedOutput()
		if err != nil {
			t.Fatalf("pg_ctlcluster %s %s %s: %v\n%s", cluster[0], cluster[1], action, err, out)
		}
	}
	t.Cleanup(func() { // never leave the cluster down
		_ = exec.Command("pg_ctlcluster", "--skip-systemctl-redirect", cluster[0], cluster[1], "start").Run()
	})
	const total = 3000
	// The quickstart as it is: a send that may have left is held as unknown (onUncertain:
	// hold), never sent again.
	c := newScaleCluster(t, scaleOptions{bin: binary, instances: 3, databaseURL: pgtest.SchemaOn(t, base), concurrency: 16,
		pkg: quickstartCopy,
		gateway: mockgw.Options{Latency: 5 * time.Millisecond, ReceiptWorkers: 16, ReceiptAttempts: 100,
			ReceiptRetryDelay: 200 * time.Millisecond}})
	var accepted atomic.Int64
	type result struct {
		ids []string
		err error
	}
	submitted := make(chan result, 1)
	go func() {
		ids, err := c.submitAll("restart-", total, 16, &accepted)
		submitted <- result{ids, err}
	}()
	for accepted.Load() < total/3 {
		select {
		case res := <-submitted:
			t.Fatalf("the submissions ended before a third were accepted: %v", res.err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	ctl("stop")
	stoppedAt := time.Now()
	t.Logf("stopped PostgreSQL at %d accepted", accepted.Load())
	for i, in := range c.instances {
		if code := waitReadyStatus(in.api, http.StatusServiceUnavailable, 20*time.Second); code != http.StatusServiceUnavailable {
			t.Errorf("instance %d: /ready answered %d while the database was down, want 503", i, code)
		}
	}
	time.Sleep(time.Second) // submissions, sends and receipts meet the outage
	ctl("start")
	t.Logf("started PostgreSQL again %s after stopping it, at %d accepted", time.Since(stoppedAt).Round(time.Millisecond), accepted.Load())
	for i, in := range c.instances {
		if code := waitReadyStatus(in.api, http.StatusOK, 60*time.Second); code != http.StatusOK {
			t.Fatalf("instance %d: /ready answered %d a minute after the database came back, want 200\n%s", i, code, tail(in.logs.String(), 4000))
		}
	}
	res := <-submitted
	if res.err != nil {
		t.Fatal(res.err)
	}
	if _, err := c.waitSettled(3*time.Minute, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	status := c.statuses(t, res.ids)
	counts := map[string]int{}
	var problems []string
	for _, id := range res.ids {
		st, seen := status[id], c.gw.Seen(id)
		counts[st]++
		switch {
		case st == "delivered" && seen == 1:
		case st == "unknown" && seen <= 1:
		default:
			problems = append(problems, fmt.Sprintf("message %s ended %q, taken by the gateway %d times", id, st, seen))
		}
	}
	for _, p := range problems[:min(len(problems), 20)] {
		t.Error(p)
	}
	if len(problems) > 20 {
		t.Errorf("… and %d more problems", len(problems)-20)
	}
	gs := c.gw.Stats()
	t.Logf("outcomes %v; gateway %+v", counts, gs)
	if gs.Duplicates != 0 {
		t.Errorf("the gateway took %d messages more than once", gs.Duplicates)
	}
}

// waitReadyStatus polls GET /ready until it answers want or timeout passes, and returns the
// last status (0 when it never answered).
func waitReadyStatus(api string, want int, timeout time.Duration) int {
	client := &http.Client{Timeout: 2 * time.Second}
	last := 0
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := client.Get(api + "/ready")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if last = resp.StatusCode; last == want {
			return last
		}
	}
	return last
}
