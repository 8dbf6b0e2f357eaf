package scripting

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// The regular expressions below are built to backtrack in goja's regexp2 engine: a nested
// quantifier that cannot settle, inside or next to a lookaround or a backreference, over a
// run of the same character with the one character the pattern needs missing. Over
// crafted (28 characters) each would run for tens of seconds (it doubles with every
// character: 15 to 40 ms at 18 characters, measured on a plain goja runtime).
const crafted = "aaaaaaaaaaaaaaaaaaaaaaaaaaaa"

// backtrackScript runs the backtracking case named by how over s. pattern is a regular
// expression the caller chooses, which no guard knows in advance.
const backtrackScript = `
function f(how, s, pattern) {
	switch (how) {
	case 'backreference': return /(a+)+\1b/.test(s);
	case 'lookahead': return /^(?=(a+)+b)/.test(s);
	case 'backreference in a lookahead': return /(?=(a+)+\1b)/.test(s);
	case 'lookahead inside a quantifier': return s.search(/((?=a)a+)+b/);
	case 'lookbehind': return /(?<=b(a+)+)c/.test(s + 'c');
	case 'negative lookbehind': return /(?<!b(a+)+)c/.exec(s + 'c');
	case 'RE2 pattern from a position': { const re = /(a*)*b/y; re.lastIndex = 1; return re.test(s); }
	case 'global replace, second match': return ('b' + s).replace(/b|(a*)*c/g, '');
	case 'replace with a function': return s.replace(/(?=(a+)+\1b)/g, () => 'x');
	case 'match': return s.match(/(a+)+\1b/g);
	case 'split': return s.split(/(?=(a+)+b)/);
	case 'spread of matchAll': return [...s.matchAll(/(a+)+\1b/g)];
	case 'pattern from the input': return new RegExp(pattern).test(s);
	case 'caught, then a loop': try { return /(a+)+\1b/.test(s) } catch (e) { for (;;) {} }
	}
	throw new Error('unknown case ' + how);
}
function ping() { return 'pong' }`

// backtrackCases are the cases of backtrackScript.
var backtrackCases = []string{
	"backreference", "lookahead", "backreference in a lookahead", "lookahead inside a quantifier",
	"lookbehind", "negative lookbehind", "RE2 pattern from a position", "global replace, second match",
	"replace with a function", "match", "split", "spread of matchAll", "pattern from the input",
	"caught, then a loop",
}

// TestBacktrackingRegExpEndsAtTheDeadline: whatever the regular expression, the call returns
// ClassDeadline by its deadline (plus generous slack for a loaded machine), and the Program
// serves the next call at once.
func TestBacktrackingRegExpEndsAtTheDeadline(t *testing.T) {
	t.Parallel()
	for _, how := range backtrackCases {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			p := newProgram(t, backtrackScript, []string{"f", "ping"})
			setDeadline(p, "f", testDeadline)
			start := time.Now()
			out, err := call(t, p, "f", how, crafted, `((?:a{1,2})+)+\1x`)
			if elapsed := time.Since(start); elapsed > testDeadline+time.Second {
				t.Errorf("took %s, deadline %s", elapsed, testDeadline)
			}
			if ClassOf(err) != ClassDeadline || !strings.Contains(err.Error(), "deadline of 50ms") {
				t.Errorf("f = %s, %v; want ClassDeadline", out, err)
			}
			if got, err := call(t, p, "ping"); err != nil || got != `"pong"` {
				t.Errorf("next call: %s, %v", got, err)
			}
			waitAbandonedStopped(t, p)
		})
	}
}

// waitAbandonedStopped waits until every runtime p abandoned has stopped: what an abandoned
// runtime may still spend is bounded (one scan of regexpScanLimit), so this ends.
func waitAbandonedStopped(t *testing.T, p *Program) {
	t.Helper()
	for give := time.Now().Add(30 * time.Second); p.Stats().AbandonedRunning != 0; {
		if time.Now().After(give) {
			t.Fatalf("abandoned runtimes still running: %+v", p.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRegExpScanLimitCoversTheDeadlines: a scan that regexp2 gives up on answers "no match"
// to goja; the guards turn that into ClassDeadline only because the scan limit is never
// shorter than a deadline the limits allow.
func TestRegExpScanLimitCoversTheDeadlines(t *testing.T) {
	t.Parallel()
	if d := DefaultLimits().loadDeadline(); d > regexpScanLimit {
		t.Errorf("the largest default deadline %s is over the scan limit %s", d, regexpScanLimit)
	}
}

// TestTopLevelBacktrackingRefusesTheScript: Compile runs the top-level code under the load
// deadline, and returns by it even when that code is stuck in a regular expression.
func TestTopLevelBacktrackingRefusesTheScript(t *testing.T) {
	t.Parallel()
	start := time.Now()
	_, err := Compile("test.js", "/(a+)+\\1b/.test('"+crafted+"')\nfunction f() {}", []string{"f"}, nil, Limits{}, nil)
	if !errors.Is(err, ErrInvalidScript) || !strings.Contains(err.Error(), "top-level code: deadline") {
		t.Errorf("err = %v", err)
	}
	if d := time.Since(start); d > DefaultLimits().loadDeadline()+time.Second {
		t.Errorf("took %s", d)
	}
}

// TestStuckCallDoesNotHoldShutdown: while a call is stuck in a regular expression under a
// far deadline, ending its context (what a shutdown does) returns it at once, and Close
// neither waits for it nor lets a later call in.
func TestStuckCallDoesNotHoldShutdown(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan struct{})
	h := &captureHandler{onRecord: func(capturedRecord) { close(started) }}
	src := `function f(s) { console.log('stuck'); return /(a+)+\1b/.test(s) }`
	p := newProgram(t, src, []string{"f"}, func(o *Options) { o.Logger = slog.New(h) })
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		_, err := p.Call(ctx, "f", crafted)
		done <- result{err, time.Now()}
	}()
	<-started
	stop := time.Now()
	cancel()
	p.Close()
	if d := time.Since(stop); d > time.Second {
		t.Errorf("Close took %s", d)
	}
	r := <-done
	if d := r.at.Sub(stop); d > time.Second {
		t.Errorf("the stuck call returned %s after its context ended", d)
	}
	if ClassOf(r.err) != ClassDeadline || !strings.Contains(r.err.Error(), "context canceled") {
		t.Errorf("err = %v", r.err)
	}
	if _, err := p.Call(context.Background(), "f", "a"); !errors.Is(err, ErrClosed) {
		t.Errorf("a call after Close: %v", err)
	}
	waitAbandonedStopped(t, p)
}
