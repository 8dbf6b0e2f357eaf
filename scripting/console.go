package scripting

import (
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/dop251/goja"
)

// console.log, console.warn and console.error write one structured log record per call, at
// levels info, warn and error, with the attributes script (the name given to Compile), entry
// (the entry point running, or "load" for top-level code) and message. The message joins the
// arguments with spaces (strings as they are, other values as JSON, or as their string
// conversion when JSON has nothing to say) and is cut at consoleLineBytes. Lines are rate
// limited per Program to consoleLinesPerSecond with bursts of consoleBurst; dropped lines
// are counted (Stats.ConsoleDropped) and the next line written carries the number dropped
// before it in the attribute "dropped". A console call never throws. Top-level code writes
// only while Compile loads the script: when a call runs it again in a fresh scope (scope.go),
// its console calls write nothing, so that a line logged at load is logged once.

const (
	consoleLineBytes      = 1024
	consoleLinesPerSecond = 20
	consoleBurst          = 20
)

// consoleLevel is the console method called.
type consoleLevel int

const (
	levelLog consoleLevel = iota
	levelWarn
	levelError
)

// slogLevel maps a console method to its log level.
func (l consoleLevel) slogLevel() slog.Level {
	switch l {
	case levelWarn:
		return slog.LevelWarn
	case levelError:
		return slog.LevelError
	}
	return slog.LevelInfo
}

// lineLimiter is a token bucket on the Program's clock, shared by all its runtimes.
type lineLimiter struct {
	mu      sync.Mutex
	now     func() time.Time
	tokens  float64
	last    time.Time
	dropped uint64
}

// newLineLimiter starts with a full bucket.
func newLineLimiter(now func() time.Time) *lineLimiter {
	return &lineLimiter{now: now, tokens: consoleBurst}
}

// allow takes a token. When it gets one, it also returns how many lines were dropped since
// the last line allowed.
func (l *lineLimiter) allow() (ok bool, droppedBefore uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.last.IsZero() {
		if elapsed := now.Sub(l.last).Seconds(); elapsed > 0 {
			l.tokens = min(consoleBurst, l.tokens+elapsed*consoleLinesPerSecond)
		}
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return false, 0
	}
	l.tokens--
	droppedBefore, l.dropped = l.dropped, 0
	return true, droppedBefore
}

// consoleMethod builds console.log, warn or error.
func (sb *sandbox) consoleMethod(level consoleLevel) func(goja.FunctionCall, *goja.Runtime) goja.Value {
	return func(call goja.FunctionCall, vm *goja.Runtime) goja.Value {
		if sb.quiet {
			return goja.Undefined()
		}
		p := sb.p
		ok, dropped := p.console.allow()
		if !ok {
			p.stats.consoleDropped.Add(1)
			return goja.Undefined()
		}
		p.stats.consoleLines.Add(1)
		var line strings.Builder
		for i, arg := range call.Arguments {
			if line.Len() >= consoleLineBytes {
				break
			}
			if i > 0 {
				line.WriteByte(' ')
			}
			line.WriteString(sb.consoleFormat(arg, consoleLineBytes-line.Len()))
		}
		attrs := []slog.Attr{
			slog.String("script", p.name),
			slog.String("entry", sb.entry),
			slog.String("message", truncate(line.String(), consoleLineBytes)),
		}
		if dropped > 0 {
			attrs = append(attrs, slog.Uint64("dropped", dropped))
		}
		p.logger.LogAttrs(sb.ctx, level.slogLevel(), "script console", attrs...)
		return goja.Undefined()
	}
}

// consoleFormat renders one console argument within budget bytes. An exception thrown while
// rendering (a cycle, a throwing getter) falls back to a placeholder; an interrupt is not an
// exception and goes on unwinding.
func (sb *sandbox) consoleFormat(v goja.Value, budget int) (s string) {
	if goja.IsString(v) {
		return v.String()
	}
	tainted := sb.tainted
	defer func() {
		if r := recover(); r != nil {
			switch r.(type) {
			case *goja.Object, *goja.Exception:
				s, sb.tainted = "[unprintable]", tainted
			default:
				panic(r)
			}
		}
	}()
	if obj, ok := v.(*goja.Object); ok && obj.ClassName() == "Error" {
		return obj.ToString().String()
	}
	w := jsonWriter{sb: sb, what: "console", limit: budget, truncate: true}
	if !w.property(nil, "", v) {
		return v.String()
	}
	if w.full {
		return string(w.buf) + "…"
	}
	return string(w.buf)
}
