package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/providers/httpgw/mockgw"
	"switchboard/store/pgtest"
)

// TestScaleOutSharesOneQueue is issue 9's run: 10,000 SMS submitted round-robin through a load
// balancer to the instances, one instance SIGKILLed after half were accepted and restarted.
// Every message must end delivered, and the gateway must have taken each exactly once, under
// the one idempotency key of its first generation, even the sends the kill cut off.
func TestScaleOutSharesOneQueue(t *testing.T) {
	if testing.Short() {
		t.Skip("long scale-out run: runs without -short")
	}
	t.Parallel()
	t.Run("sqlite/1-instance", func(t *testing.T) {
		runScaleOut(t, scaleOptions{bin: binary, instances: 1})
	})
	t.Run("postgres/3-instances", func(t *testing.T) {
		runScaleOut(t, scaleOptions{bin: binary, instances: 3, databaseURL: pgtest.Schema(t)})
	})
}

func runScaleOut(t *testing.T, opts scaleOptions) {
	const total = 10000
	opts.concurrency = 16
	// The gateway takes a message before it waits to answer, so that a send the kill cuts off
	// may well have left: only the idempotency key keeps it from being taken twice.
	opts.gateway = mockgw.Options{IdempotencyKeys: true, LatencyAfterTake: true, Latency: 10 * time.Millisecond,
		ReceiptDelay: 50 * time.Millisecond, ReceiptWorkers: 16, ReceiptAttempts: 40, ReceiptRetryDelay: 100 * time.Millisecond}
	c := newScaleCluster(t, opts)
	start := time.Now()
	var accepted atomic.Int64
	type result struct {
		ids []string
		err error
	}
	submitted := make(chan result, 1)
	go func() {
		ids, err := c.submitAll("scale-", total, 32, &accepted)
		submitted <- result{ids, err}
	}()
	var res result
	for killed := false; !killed; {
		select {
		case res = <-submitted:
			t.Fatalf("the submissions ended before half were accepted: %v", res.err)
		case <-time.After(5 * time.Millisecond):
		}
		if accepted.Load() >= total/2 {
			victim := c.instances[len(c.instances)-1]
			killedAt := time.Now()
			victim.kill()
			victim.start()
			victim.waitReady(90 * time.Second)
			t.Logf("killed an instance at %d accepted; it was ready again %s later", accepted.Load(), time.Since(killedAt).Round(time.Millisecond))
			killed = true
		}
	}
	if res = <-submitted; res.err != nil {
		t.Fatal(res.err)
	}
	ids := res.ids
	t.Logf("%d accepted in %s", total, time.Since(start).Round(time.Millisecond))
	if distinct := len(slices.Compact(slices.Sorted(slices.Values(ids)))); distinct != total {
		t.Fatalf("%d distinct message ids for %d submissions", distinct, total)
	}
	if _, err := c.waitSettled(3*time.Minute, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	t.Logf("settled %s after the start", time.Since(start).Round(time.Millisecond))

	status := c.statuses(t, ids)
	counts := map[string]int{}
	var problems []string
	for _, id := range ids {
		counts[status[id]]++
		if status[id] != "delivered" {
			problems = append(problems, fmt.Sprintf("message %s ended %q, not delivered", id, status[id]))
		}
		if seen, keys := c.gw.Seen(id), c.gw.Keys(id); seen != 1 || !slices.Equal(keys, []string{engine.ProviderIdempotencyKey(id, 1)}) {
			problems = append(problems, fmt.Sprintf("the gateway took message %s %d times under keys %v; want once under %s",
				id, seen, keys, engine.ProviderIdempotencyKey(id, 1)))
		}
	}
	for _, p := range problems[:min(len(problems), 20)] {
		t.Error(p)
	}
	if len(problems) > 20 {
		t.Errorf("… and %d more problems", len(problems)-20)
	}
	gs := c.gw.Stats()
	t.Logf("outcomes %v; gateway %+v (Replayed: sends cut off by the kill or by a lapsed lease, sent again under the same key); %s in all",
		counts, gs, time.Since(start).Round(time.Millisecond))
	if gs.Unique != total || gs.Duplicates != 0 {
		t.Errorf("the gateway took %d distinct messages (%d more than once), want %d once each", gs.Unique, gs.Duplicates, total)
	}
}

// BenchmarkScaleOut submits b.N SMS from 64 callers through the load balancer to 1, 2 or 3
// instances on one PostgreSQL (and 1 on SQLite) running a non-race build, and reports accepted
// per second (until the last 202) and delivered per second (until every report came back).
// Run the figures with:
//
//	SWITCHBOARD_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test?sslmode=disable \
//	  go test -run '^$' -bench BenchmarkScaleOut -benchtime 20000x ./cmd/switchboard/
func BenchmarkScaleOut(b *testing.B) {
	b.Run("sqlite/instances=1", func(b *testing.B) { benchmarkScaleOut(b, 1, false) })
	for n := 1; n <= 3; n++ {
		b.Run(fmt.Sprintf("postgres/instances=%d", n), func(b *testing.B) { benchmarkScaleOut(b, n, true) })
	}
}

func benchmarkScaleOut(b *testing.B, instances int, postgres bool) {
	bin, err := nonRaceBinary()
	if err != nil {
		b.Fatal(err)
	}
	// Like a real gateway, this one keeps posting a report until it is taken.
	opts := scaleOptions{bin: bin, instances: instances, concurrency: 32,
		gateway: mockgw.Options{IdempotencyKeys: true, ReceiptWorkers: 32, ReceiptAttempts: 40}}
	if postgres {
		opts.databaseURL = pgtest.Schema(b)
	}
	c := newScaleCluster(b, opts)
	var accepted atomic.Int64
	b.ResetTimer()
	start := time.Now()
	if _, err := c.submitAll(fmt.Sprintf("bench-%d-", b.N), b.N, 64, &accepted); err != nil {
		b.Fatal(err)
	}
	acceptedIn := time.Since(start)
	settledAt, err := c.waitSettled(5*time.Minute, 100*time.Millisecond)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	acceptedPerSecond := float64(b.N) / acceptedIn.Seconds()
	deliveredPerSecond := float64(b.N) / settledAt.Sub(start).Seconds()
	if s := c.gw.Stats(); s.Unique != b.N || s.Duplicates != 0 || s.ReceiptsPosted != b.N {
		b.Fatalf("gateway %+v; want %d messages taken once and reported (%.0f accepted/s, %.0f reports/s)",
			s, b.N, acceptedPerSecond, deliveredPerSecond)
	}
	b.ReportMetric(acceptedPerSecond, "accepted/s")
	b.ReportMetric(deliveredPerSecond, "delivered/s")
}

// nonRaceBinary builds switchboard without the race detector, once, beside binary (TestMain
// removes both): throughput measured on a race build says little.
var nonRaceBinary = sync.OnceValues(func() (string, error) {
	path := binary + "-norace"
	out, err := exec.Command("go", "build", "-o", path, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", path, err, out)
	}
	return path, nil
})

// submitAll submits n SMS through the proxy from callers goroutines, message i under the
// Idempotency-Key prefix+i, and returns the message ids by i. Like a careful client, each
// caller sends a submission again with the same key after 429, 502, 503 or a broken connection.
func (c *scaleCluster) submitAll(prefix string, n, callers int, accepted *atomic.Int64) ([]string, error) {
	body, err := json.Marshal(smsBody(nil))
	if err != nil {
		return nil, fmt.Errorf("encode the submission: %w", err)
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = callers
	client := &http.Client{Timeout: 30 * time.Second, Transport: t}
	defer t.CloseIdleConnections()
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, callers)
	for range callers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				id, err := c.submitOne(client, prefix+fmt.Sprint(i), body)
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
				accepted.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	return ids, <-errs
}

// submitOne sends one submission until it is accepted, for at most two minutes.
func (c *scaleCluster) submitOne(client *http.Client, key string, body []byte) (string, error) {
	deadline := time.Now().Add(2 * time.Minute)
	last := "no answer"
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodPost, c.api+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+c.sender)
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
		} else {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusAccepted:
				var a struct{ ID string }
				if err := json.Unmarshal(raw, &a); err != nil || a.ID == "" {
					return "", fmt.Errorf("submission %s: 202 without an id: %s", key, raw)
				}
				return a.ID, nil
			case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable:
				last = fmt.Sprintf("%d %s", resp.StatusCode, raw)
			default:
				return "", fmt.Errorf("submission %s: %d %s", key, resp.StatusCode, raw)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", fmt.Errorf("submission %s never accepted; last answer: %s", key, last)
}

// waitSettled polls GET /v1/slo until nothing is queued or sending and the gateway has posted
// (or given up) the report of every message it took, and returns when it saw that.
func (c *scaleCluster) waitSettled(timeout, every time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	var q, s int64
	for time.Now().Before(deadline) {
		q, s = queueDepth(c.client, c.api, c.operator)
		if gs := c.gw.Stats(); q == 0 && s == 0 && gs.ReceiptsPosted+gs.ReceiptsFailed >= gs.Unique {
			return time.Now(), nil
		}
		time.Sleep(every)
	}
	return time.Time{}, fmt.Errorf("not settled after %s: %d queued, %d sending, gateway %+v", timeout, q, s, c.gw.Stats())
}

// statuses reads every message's status from 16 readers spread over the instances (not through
// the proxy, which would only add work), reading again for up to 30 seconds those not yet
// delivered.
func (c *scaleCluster) statuses(t *testing.T, ids []string) map[string]string {
	out := make(map[string]string, len(ids))
	var mu sync.Mutex
	pending := ids
	for deadline := time.Now().Add(30 * time.Second); len(pending) > 0 && time.Now().Before(deadline); {
		work := make(chan string)
		var wg sync.WaitGroup
		for r := range 16 {
			api := c.instances[r%len(c.instances)].api
			wg.Go(func() {
				for id := range work {
					st := messageStatus(t, c.client, api, c.sender, id)
					mu.Lock()
					out[id] = st
					mu.Unlock()
				}
			})
		}
		for _, id := range pending {
			work <- id
		}
		close(work)
		wg.Wait()
		pending = slices.DeleteFunc(slices.Clone(pending), func(id string) bool { return out[id] == "delivered" })
		if len(pending) > 0 {
			time.Sleep(500 * time.Millisecond)
		}
	}
	return out
}
