package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// metricValue is the value of series (name and labels as the text format writes them) in a
// scrape, and whether it is there.
func metricValue(text, series string) (float64, bool) {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return f, err == nil
		}
	}
	return 0, false
}

// waitForMetric scrapes until series has the value want, failing after 30 s.
func waitForMetric(t *testing.T, e *apiEnv, series string, want float64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		text := e.scrapeMetrics(t)
		if v, ok := metricValue(text, series); ok && v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics never held %s %v:\n%s", series, want, text)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// unix is t as a timestamp gauge holds it.
func unix(t time.Time) float64 { return float64(t.Unix()) }

// serve's own check of the journal goes through the API's verification (so the console shows
// it) and leaves its result in the metrics: intact, then broken once a record is changed
// behind the store's back.
func TestJournalChecksSetTheAuditMetrics(t *testing.T) {
	t.Parallel()
	f := journalOf8(t)
	e := f.e
	waitForMetric(t, e, "switchboard_audit_chains_broken", 0)
	waitForMetric(t, e, "switchboard_audit_last_verification_timestamp_seconds", 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticks := make(chan time.Time)
	go e.stack.checkJournalOn(ctx, ticks)

	ticks <- time.Now()
	waitForMetric(t, e, `switchboard_audit_verifications_total{result="intact"}`, 1)
	waitForMetric(t, e, "switchboard_audit_chains_broken", 0)
	waitForMetric(t, e, "switchboard_audit_last_verification_timestamp_seconds", unix(e.clock.Now()))

	if _, err := f.raw().Exec(fmt.Sprintf(`UPDATE audit SET outcome = 'cancelled' WHERE writer = '%s' AND seq = 4`, f.st.WriterID())); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(journalCheckInterval)
	ticks <- time.Now()
	waitForMetric(t, e, `switchboard_audit_verifications_total{result="broken"}`, 1)
	waitForMetric(t, e, "switchboard_audit_chains_broken", 1)
	waitForMetric(t, e, "switchboard_audit_last_verification_timestamp_seconds", unix(e.clock.Now()))
	v := e.do(request{method: "GET", path: "/v1/audit/verification", token: e.token("operations-console")})
	if doc := v.json(t); v.status != 200 || doc["state"] != "done" || doc["intact"] != false {
		t.Fatalf("the API's last verification: %d %s", v.status, v.raw)
	}
}

// A retention sweep that went through every kind leaves its time in the metrics.
func TestRetentionSweepSetsItsMetric(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	waitForMetric(t, e, "switchboard_retention_last_sweep_timestamp_seconds", 0)
	stop := e.stack.startRetention(context.Background())
	defer stop()
	waitForMetric(t, e, "switchboard_retention_last_sweep_timestamp_seconds", unix(e.clock.Now()))
}
