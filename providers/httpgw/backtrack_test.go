package httpgw

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
)

// crafted makes the regular expressions of backtrackAdapter backtrack for tens of seconds in
// goja's regexp2 engine (the time doubles with every character).
const crafted = "aaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// stuckBound bounds a send or a callback whose script is stuck: far below the tens of
// seconds the crafted input costs without the sandbox's bounds, far above what a loaded
// machine adds to the script deadlines and the local HTTP exchange.
const stuckBound = 5 * time.Second

// backtrackAdapter runs a backtracking regular expression over what it receives: prepare
// over the message's text, interpret over the gateway's answer, receipt over the callback's
// body. Ordinary input goes through in microseconds.
const backtrackAdapter = `
function prepare(message, profile) {
  if (/(a+)+\1b/.test(message.parts.text)) { return {target: "never"}; }
  return {target: "messages", headers: {"content-type": "application/json"}, bodyFormat: "json",
    body: {to: message.recipient, text: message.parts.text}};
}
function interpret(response) {
  console.log("interpreting");
  var text = typeof response.body === "string" ? response.body : JSON.stringify(response.body);
  if (/^(?=(a+)+b)/.test(text)) { return {outcome: "permanent", code: "gw.never"}; }
  return {outcome: "accepted", providerReference: response.body.id};
}
function receipt(request) {
  if (/(?<=b(a+)+)c/.test(request.body + "c")) { return null; }
  return {providerReference: request.json.id, report: "delivered"};
}`

// backtrackGateway answers a request whose text asks for it with crafted (text/plain), and
// any other with {"id":"gw-1"}.
func backtrackGateway(t *testing.T) *gateway {
	return newGateway(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "answer crafted") {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, crafted)
			return
		}
		answerJSON(http.StatusOK, `{"id":"gw-1"}`)(w, r)
	})
}

// backtrackProvider is a provider of backtrackAdapter with the default deadlines (prepare and
// interpret 200 ms, receipt 100 ms): a stuck script is abandoned long before regexp2 gives up
// on its scan (after 1 s), and the ordinary calls have room on a loaded machine, where the
// abandoned scans still take the CPU.
func backtrackProvider(t *testing.T, base string) *Provider {
	return newTestProvider(t, baseConfig(t, base, backtrackAdapter))
}

// outboundWithText is smsOutbound with another id, recipient and text.
func outboundWithText(id, recipient, text string) *engine.Outbound {
	out := smsOutbound()
	out.MessageID, out.Recipient, out.Parts = id, recipient, map[string]string{"text": text}
	return out
}

// TestBacktrackingScriptFreesTheWorker: a send whose prepare or interpret is stuck in a
// regular expression, over the message or over the gateway's crafted answer, ends by its
// deadlines with the outcome of a script deadline, without waiting for the script's runtime
// (abandoned, still in its scan); the next ordinary message on the same provider and the
// same goroutine is sent at once.
func TestBacktrackingScriptFreesTheWorker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		class      engine.OutcomeClass
		requests   int // reaching the gateway for the stuck message
	}{
		{"prepare over the message", crafted, engine.OutcomeTransient, 0},
		{"interpret over the gateway's answer", "please answer crafted", engine.OutcomeMaybeSent, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			gw := backtrackGateway(t)
			p := backtrackProvider(t, gw.URL+"/")
			start := time.Now()
			o := p.Send(context.Background(), outboundWithText("msg-stuck", "+15550001", tc.text))
			if d := time.Since(start); d > stuckBound {
				t.Errorf("the stuck send took %s", d)
			}
			wantOutcome(t, o, tc.class, "script.deadline")
			// regexp2 gives up on the scan only after 1 s, long after the deadlines, so
			// the script is normally still running now; on a machine so loaded that the
			// deadline passed before the scan began, the guard refused the scan instead.
			t.Logf("after the stuck send: %d runtimes abandoned, %d still running",
				p.program.Stats().RuntimesAbandoned, p.program.Stats().AbandonedRunning)
			o = p.Send(context.Background(), outboundWithText("msg-next", "+15550002", "See you tomorrow."))
			wantOutcome(t, o, engine.OutcomeAccepted, "")
			if o.ProviderReference != "gw-1" {
				t.Errorf("reference %q", o.ProviderReference)
			}
			reqs := gw.requests()
			if len(reqs) != tc.requests+1 || !strings.Contains(string(reqs[len(reqs)-1].Body), "+15550002") {
				t.Errorf("gateway saw %d requests, want the next message last", len(reqs))
			}
			waitAbandonedStopped(t, p)
		})
	}
}

// TestBacktrackingReceiptAnswersInTime: a callback whose body makes receipt backtrack is
// answered service.unavailable (the gateway posts it again) by the receipt deadline, and the
// next callback is read.
func TestBacktrackingReceiptAnswersInTime(t *testing.T) {
	t.Parallel()
	p := backtrackProvider(t, "http://127.0.0.1:1/")
	start := time.Now()
	got, err := p.ParseReceipts(context.Background(), callbackRequest("/cb", "text/plain", []byte(crafted)), []byte(crafted))
	if d := time.Since(start); d > stuckBound {
		t.Errorf("the stuck callback took %s", d)
	}
	if got != nil || !errors.Is(err, engine.ErrServiceUnavailable) || engine.CodeOf(err) != engine.CodeServiceUnavailable {
		t.Errorf("ParseReceipts = %+v, %v; want service.unavailable", got, err)
	}
	body := []byte(`{"id":"gw-1"}`)
	got, err = p.ParseReceipts(context.Background(), callbackRequest("/cb", "application/json", body), body)
	if err != nil || len(got) != 1 || got[0].ProviderReference != "gw-1" || got[0].Report != engine.ReportDelivered {
		t.Errorf("next callback: %+v, %v", got, err)
	}
	waitAbandonedStopped(t, p)
}

// TestShutdownDoesNotWaitForAStuckScript: with interpret stuck over the gateway's answer
// under its default deadline, ending the send's context and closing the provider (what
// serve does on SIGTERM) return at once.
func TestShutdownDoesNotWaitForAStuckScript(t *testing.T) {
	t.Parallel()
	gw := backtrackGateway(t)
	interpreting := make(chan struct{})
	var once sync.Once
	cfg := baseConfig(t, gw.URL+"/", backtrackAdapter)
	cfg.Logger = slog.New(onConsole(func(msg string) {
		if msg == "interpreting" {
			once.Do(func() { close(interpreting) })
		}
	}))
	p := newTestProvider(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan engine.Outcome, 1)
	go func() { done <- p.Send(ctx, outboundWithText("msg-stuck", "+15550001", "please answer crafted")) }()
	<-interpreting
	stop := time.Now()
	cancel()
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(stop); d > stuckBound {
		t.Errorf("Close took %s", d)
	}
	o := <-done
	if d := time.Since(stop); d > stuckBound {
		t.Errorf("the send returned %s after shutdown began", d)
	}
	if o.Class != engine.OutcomeMaybeSent {
		t.Errorf("outcome %+v, want maybe-sent (the request had left)", o)
	}
	waitAbandonedStopped(t, p)
}

// waitAbandonedStopped waits until every runtime the provider's program abandoned has
// stopped: an abandoned runtime may only finish one bounded regular expression scan.
func waitAbandonedStopped(t *testing.T, p *Provider) {
	t.Helper()
	for give := time.Now().Add(30 * time.Second); p.program.Stats().AbandonedRunning != 0; {
		if time.Now().After(give) {
			t.Fatalf("abandoned runtimes still running: %+v", p.program.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// onConsole is a log handler that calls f with the message of every script console line.
type onConsole func(message string)

func (h onConsole) Enabled(context.Context, slog.Level) bool { return true }
func (h onConsole) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h onConsole) WithGroup(string) slog.Handler            { return h }
func (h onConsole) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "message" {
			h(a.Value.String())
		}
		return true
	})
	return nil
}
