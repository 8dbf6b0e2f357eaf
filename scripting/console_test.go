package scripting

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestConsoleWritesStructuredRecords(t *testing.T) {
	t.Parallel()
	h := &captureHandler{}
	src := `
console.log('loading');
function f() {
	console.log('plain', 42, true, null, undefined, {a: [1, 'x']}, [1, 2]);
	console.warn('careful');
	console.error(new TypeError('boom'));
	const cyclic = {}; cyclic.self = cyclic;
	console.log('cyclic', cyclic);
	console.log('huge', 'x'.repeat(5000));
	console.log({big: 'y'.repeat(5000)});
	console.log();
	return 'done';
}`
	p := newProgram(t, src, []string{"f"}, func(o *Options) { o.Logger = slog.New(h) })
	if got := mustCall(t, p, "f"); got != `"done"` {
		t.Fatalf("f() = %s", got)
	}
	recs := h.snapshot()
	want := []struct {
		level   slog.Level
		entry   string
		message string
	}{
		{slog.LevelInfo, "load", "loading"},
		{slog.LevelInfo, "f", `plain 42 true null undefined {"a":[1,"x"]} [1,2]`},
		{slog.LevelWarn, "f", "careful"},
		{slog.LevelError, "f", "TypeError: boom"},
		{slog.LevelInfo, "f", "cyclic [unprintable]"},
		{slog.LevelInfo, "f", "huge " + strings.Repeat("x", consoleLineBytes-len("huge ")-len("…")) + "…"},
		{slog.LevelInfo, "f", `{"big":"` + strings.Repeat("y", consoleLineBytes-len(`{"big":"`)-len("…")) + "…"},
		{slog.LevelInfo, "f", ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d: %+v", len(recs), len(want), recs)
	}
	for i, w := range want {
		r := recs[i]
		if r.Level != w.level || r.Message != "script console" || r.Attrs["script"] != "test.js" || r.Attrs["entry"] != w.entry || r.Attrs["message"] != w.message {
			t.Errorf("record %d = %+v\nwant level %s entry %s message %.60q", i, r, w.level, w.entry, w.message)
		}
		if len(r.Attrs["message"]) > consoleLineBytes {
			t.Errorf("record %d message is %d bytes", i, len(r.Attrs["message"]))
		}
	}
	if s := p.Stats(); s.ConsoleLines != uint64(len(want)) || s.ConsoleDropped != 0 {
		t.Errorf("stats = %+v", s)
	}
}

func TestConsoleIsRateLimitedPerProgram(t *testing.T) {
	t.Parallel()
	h := &captureHandler{}
	clock := newFakeClock()
	p := newProgram(t, `function f(n) { for (let i = 0; i < n; i++) console.log('line ' + i); return n }`, []string{"f"},
		func(o *Options) { o.Logger, o.Now = slog.New(h), clock.Now })

	mustCall(t, p, "f", 1000) // a flood: the burst passes, the rest is dropped, the call is unharmed
	if recs := h.snapshot(); len(recs) != consoleBurst || recs[consoleBurst-1].Attrs["message"] != "line 19" {
		t.Fatalf("%d records after the flood", len(recs))
	}
	if s := p.Stats(); s.ConsoleLines != consoleBurst || s.ConsoleDropped != 1000-consoleBurst {
		t.Errorf("stats = %+v", s)
	}

	mustCall(t, p, "f", 1) // same instant: still no token
	if n := len(h.snapshot()); n != consoleBurst {
		t.Errorf("%d records without time passing", n)
	}

	clock.Advance(time.Second / consoleLinesPerSecond) // one token
	mustCall(t, p, "f", 2)
	recs := h.snapshot()
	if len(recs) != consoleBurst+1 {
		t.Fatalf("%d records after one token", len(recs))
	}
	if last := recs[len(recs)-1]; last.Attrs["message"] != "line 0" || last.Attrs["dropped"] != "981" {
		t.Errorf("the first line after the drops = %+v, want dropped=981", last)
	}

	clock.Advance(time.Hour) // refills to the burst, not beyond
	mustCall(t, p, "f", 3*consoleBurst)
	if n := len(h.snapshot()); n != 2*consoleBurst+1 {
		t.Errorf("%d records after a long pause", n)
	}
}

func TestConsoleWithoutLoggerDiscards(t *testing.T) {
	t.Parallel()
	p := newProgram(t, `function f() { console.log('nobody listens'); return 1 }`, []string{"f"})
	if got := mustCall(t, p, "f"); got != "1" {
		t.Errorf("f() = %s", got)
	}
}
