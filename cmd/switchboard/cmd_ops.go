package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"switchboard/engine"
	"switchboard/engine/runtime"
	"switchboard/packages"
	"switchboard/store"
)

// What the operator commands (messages, audit, retention) share: the store opened next to a
// running serve, times given on the command line, and progress on long runs.

// opsEnv is what an operator command works on.
type opsEnv struct {
	rt    *runtime.Runtime
	pkg   *packages.Package
	store *store.Store
	clock engine.Clock
}

// openOps loads the runtime file and its package as serve does and opens the database without
// migrating it: serve may be running on it (SQLite in WAL mode lets both work), and a command
// line tool never builds or upgrades a schema.
func (a *app) openOps(ctx context.Context) (*opsEnv, error) {
	rt, pkg, err := loadRuntime(a.config, a.getenv)
	if err != nil {
		return nil, err
	}
	clock := engine.SystemClock{}
	st, _, err := openStore(ctx, rt, pkg, clock, newLogger(a.stderr, a.getenv), false, nil)
	if err != nil {
		return nil, err
	}
	return &opsEnv{rt: rt, pkg: pkg, store: st, clock: clock}, nil
}

// close closes the store.
func (e *opsEnv) close() { _ = e.store.Close() }

// parseTime reads a time flag: RFC 3339, "now", or an age before now such as "90m", "36h" or
// "7d" (days of 24 hours). A malformed value is a usage error.
func parseTime(flag, v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if v == "now" {
		return now, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t.UTC(), nil
	}
	if d, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(d); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, usageError(fmt.Errorf("--%s must be an RFC 3339 time, now, or an age such as 36h or 7d", flag))
}

// progress reports a long run: a bar when stderr is a terminal, otherwise one line per step in
// human output, and nothing in JSON output (the final object says it all).
type progress struct {
	bar   *progressbar.ProgressBar
	lines io.Writer
	label string
}

// newProgress starts reporting a run of total items.
func (a *app) newProgress(label string, total int64) *progress {
	if a.json() {
		return &progress{}
	}
	if f, ok := a.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		return &progress{bar: progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription(label),
			progressbar.OptionShowCount(), progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish())}
	}
	return &progress{lines: a.stderr, label: label}
}

// set reports that done of total items are handled.
func (p *progress) set(done, total int64) {
	switch {
	case p.bar != nil:
		_ = p.bar.Set64(done)
	case p.lines != nil:
		fmt.Fprintf(p.lines, "%s: %d/%d\n", p.label, done, total)
	}
}

// step reports a step that handled n items of what, without a known total.
func (p *progress) step(what string, n int) {
	switch {
	case p.bar != nil:
		_ = p.bar.Add(n)
	case p.lines != nil:
		fmt.Fprintf(p.lines, "%s: %s %d\n", p.label, what, n)
	}
}

// finish ends the report.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// previewHint tells a person how to apply what was previewed.
func (a *app) previewHint() {
	if !a.json() {
		fmt.Fprintln(a.stderr, "preview only: nothing changed; run again with --apply to apply it")
	}
}

// timeText formats a time for human output.
func timeText(t time.Time) string { return t.UTC().Format(time.RFC3339) }
