package main

import (
	"strings"
	"testing"
)

// TestBenchOpenLoop runs the real binary at a fixed rate with the event receiver: it submits
// exactly rate × duration messages, loses and duplicates none, and reports the open loop's
// members (delivery lag, schedule) and the events' (lag, serve CPU per event), in order and
// within the run's wall time. No figure is held to a speed.
func TestBenchOpenLoop(t *testing.T) {
	t.Parallel()
	raw, r, wall := benchJSON(t, "--rate", "200", "--duration", "2s", "--callers", "8", "--webhooks", "--package", quickstartCopy(t))
	wantNumbers(t, raw, "completionSeconds", "deliveryLagP50Ms", "deliveryLagP99Ms", "eventLagP99Ms",
		"serveCpuUsPerEvent", "behindSchedule", "callersBusy", "openLoopSeconds")
	if r.Requested != 400 || r.Messages != 400 || r.Delivered != 400 || r.Lost != 0 || r.Duplicates != 0 || !r.OK {
		t.Fatalf("requested %d, messages %d, delivered %d, lost %d, duplicates %d, ok %v; want 400, 400, 400, 0, 0, true",
			r.Requested, r.Messages, r.Delivered, r.Lost, r.Duplicates, r.OK)
	}
	if r.Rate != 200 || r.OpenLoopSeconds == nil || *r.OpenLoopSeconds != 2 {
		t.Fatalf("rate %v, openLoopSeconds %v; want 200 and 2", r.Rate, r.OpenLoopSeconds)
	}
	if *r.DeliveryLagP50Ms <= 0 || *r.DeliveryLagP99Ms < *r.DeliveryLagP50Ms {
		t.Fatalf("delivery lag p50 %v ms, p99 %v ms: want positive and in order", *r.DeliveryLagP50Ms, *r.DeliveryLagP99Ms)
	}
	if r.CompletionSeconds <= 0 || r.CompletionSeconds > wall.Seconds() {
		t.Fatalf("completionSeconds %v, want above 0 and at most the run's wall time %v", r.CompletionSeconds, wall)
	}
	if b, c := *r.BehindSchedule, *r.CallersBusy; b < 0 || b > 400 || c > b {
		t.Fatalf("behindSchedule %d, callersBusy %d: want at most 400, and the busy ones among the late", b, c)
	}
	if r.Received == 0 || r.EventsPending != 0 || *r.EventLagP99Ms < *r.EventLagP50Ms || *r.ServeCPUUsPerEvent <= 0 {
		t.Fatalf("events %d, pending %d, lag p50 %v p99 %v, serve CPU per event %v: want all delivered, lags in order, a cost",
			r.Received, r.EventsPending, *r.EventLagP50Ms, *r.EventLagP99Ms, *r.ServeCPUUsPerEvent)
	}
}

// TestBenchAdmissionOff runs a small burst with the serve processes' admission policy off: the
// run reports it and passes; serve itself refuses a policy it does not know.
func TestBenchAdmissionOff(t *testing.T) {
	t.Parallel()
	benchTable(t, []string{"admission off", "100 delivered, 0 failed, 0 lost", "completion"},
		"--messages", "100", "--callers", "4", "--admission", "off", "--package", quickstartCopy(t))
	if _, stderr, code := cli(t, "serve", "--admission", "sometimes"); code != 2 || !strings.Contains(stderr, "--admission must be give-way or off") {
		t.Errorf("serve --admission sometimes: exit %d (%s), want 2 and the reason", code, stderr)
	}
}

// TestBenchRefusesBadOpenLoops checks the usage errors (exit 2) of --rate, --duration and
// --admission, each for its own reason.
func TestBenchRefusesBadOpenLoops(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "100"}, "--rate and --duration go together"},
		{[]string{"--duration", "2s"}, "--rate and --duration go together"},
		{[]string{"--rate", "0", "--duration", "2s"}, "--rate and --duration go together"},
		{[]string{"--rate", "100", "--duration", "2s", "--messages", "5"}, "--messages is the size of a burst"},
		{[]string{"--rate", "-1", "--duration", "2s"}, "--rate must be"},
		{[]string{"--rate", "NaN", "--duration", "2s"}, "--rate must be"},
		{[]string{"--rate", "2000000", "--duration", "2s"}, "--rate must be"},
		{[]string{"--rate", "100", "--duration", "-2s"}, "--duration must be"},
		{[]string{"--rate", "100", "--duration", "25h"}, "--duration must be"},
		{[]string{"--rate", "0.1", "--duration", "1s"}, "at least one message"},
		{[]string{"--rate", "1000", "--duration", "24h"}, "more than the 10000000 a run holds"},
		{[]string{"--rate", "100", "--duration", "2s", "--load", "wrk"}, "wrk has no fixed-rate mode"},
		{[]string{"--admission", "sometimes"}, "--admission must be give-way or off"},
	} {
		args := append([]string{"bench"}, tc.args...)
		if _, stderr, code := cli(t, args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d (%s), want 2 and %q", args, code, strings.TrimSpace(stderr), tc.want)
		}
	}
}
