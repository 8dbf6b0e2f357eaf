package scripting

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/parser"
)

// Options configure CompileWith. The zero value of every field is usable.
type Options struct {
	// Required entry points must be defined by the script as functions.
	Required []string
	// Optional entry points may be absent; when the script binds the name, it must be a function.
	Optional []string
	// Limits lower DefaultLimits (see Limits.Lower); zero fields keep the defaults.
	Limits Limits
	// Logger receives console output; nil discards it.
	Logger *slog.Logger
	// Observer, when set, is called once per Call or CallInto that reached the script, with
	// the entry point, the failure class ("" on success) and the call's wall-clock duration.
	// It runs on the caller's goroutine and must be safe for concurrent use. Calls refused
	// before the script runs (ErrNoEntry, ErrClosed, ErrInput) are not observed.
	Observer func(entry, class string, d time.Duration)
	// Now is the clock of the console rate limit; nil means time.Now.
	Now func() time.Time
}

// Program is one compiled script with its pool of prepared runtimes. Its methods are safe
// for concurrent use.
type Program struct {
	name      string
	scope     *goja.Program // the script as a function expression: see scope.go
	reuse     bool          // one run of the scope serves every call (scope_reuse.go)
	lockdown  *goja.Program
	iterators *goja.Program
	declared  []string             // required and optional entry points, in order
	entries   map[string]entryInfo // the declared entry points; read-only
	limits    Limits
	grace     time.Duration // abandonGrace, which only a test changes
	logger    *slog.Logger
	observer  func(entry, class string, d time.Duration)
	console   *lineLimiter
	pool      pool
	plans     planCache // CallInto's decode plans
	stats     counters
}

// entryInfo is what a call needs to know about its entry point, worked out at Compile.
type entryInfo struct {
	defined     bool   // the script defines it as a function
	index       int    // its index in the scope function's answer
	key         string // the same, as a property name
	deadline    time.Duration
	outputBytes int
}

// Compile checks and compiles one classic (non-module) script once, in strict mode, and
// verifies that every name in required is defined as a function (optional ones may be
// absent). It runs the script's top-level code once, in a locked-down runtime that becomes
// the first pooled one; top-level code that throws or outlives the load deadline refuses the
// script. No call sees what another did to the script's state (see Call). limits are
// applied as DefaultLimits().Lower(limits). Every refusal wraps
// ErrInvalidScript and names the script. logger receives console output (nil discards it).
func Compile(name, source string, required, optional []string, limits Limits, logger *slog.Logger) (*Program, error) {
	return CompileWith(name, source, Options{Required: required, Optional: optional, Limits: limits, Logger: logger})
}

// CompileWith is Compile with Options, which add an Observer and a clock.
func CompileWith(name, source string, o Options) (*Program, error) {
	invalid := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidScript, name, fmt.Sprintf(format, args...))
	}
	if err := o.Limits.validate(); err != nil {
		return nil, invalid("limits: %v", err)
	}
	limits := DefaultLimits().Lower(o.Limits)
	if len(source) > limits.SourceBytes {
		return nil, invalid("the source is %d bytes, over the limit of %d", len(source), limits.SourceBytes)
	}
	declared, err := entryNames(o.Required, o.Optional)
	if err != nil {
		return nil, invalid("%v", err)
	}
	tree, err := goja.Parse(name, source, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidScript, syntaxMessage(name, err))
	}
	if idx, found := findBigIntLiteral(tree); found {
		return nil, invalid("%s: BigInt literals are not allowed in the sandbox", tree.File.Position(int(idx)-tree.File.Base()))
	}
	topLevel, reuse := reusableScope(tree)
	scope, err := scopeProgram(name, source, tree, declared, topLevel, reuse)
	if err != nil {
		return nil, invalid("%v", err)
	}
	lockdown, err := goja.Compile("<sandbox:lockdown>", lockdownSource, true)
	if err != nil {
		return nil, fmt.Errorf("scripting: compiling the lockdown program: %w", err)
	}
	iterators, err := goja.Compile("<sandbox:iterators>", iteratorPrototypesSource, true)
	if err != nil {
		return nil, fmt.Errorf("scripting: compiling the iterator program: %w", err)
	}
	p := &Program{
		name: name, scope: scope, reuse: reuse, lockdown: lockdown, iterators: iterators,
		declared: declared, entries: make(map[string]entryInfo, len(declared)),
		limits: limits, grace: abandonGrace, logger: o.Logger, observer: o.Observer,
		pool: pool{max: 4 * runtime.GOMAXPROCS(0)},
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	p.console = newLineLimiter(now)

	sb, err := newSandbox(p)
	if err != nil {
		return nil, err
	}
	p.stats.created.Add(1)
	kinds, err := p.load(sb)
	if err != nil {
		var scriptErr *Error
		if errors.As(err, &scriptErr) {
			return nil, invalid("top-level code: %s: %s", scriptErr.Class, scriptErr.Message)
		}
		return nil, err
	}
	var missing []string
	for i, entry := range declared {
		kind := kinds[i]
		if kind != "function" && kind != "undefined" {
			sb.stop()
			return nil, invalid("%v", &notFunctionError{entry: entry, kind: kind})
		}
		p.entries[entry] = entryInfo{
			defined: kind == "function", index: i, key: strconv.Itoa(i),
			deadline: limits.deadline(entry), outputBytes: limits.outputBytes(entry),
		}
		if kind != "function" && slices.Contains(o.Required, entry) {
			missing = append(missing, entry)
		}
	}
	if len(missing) > 0 {
		sb.stop()
		return nil, invalid("required entry point(s) not defined as functions: %s", strings.Join(missing, ", "))
	}
	p.pool.put(sb)
	return p, nil
}

// Has reports whether the script defines entry as a function. Only entry points declared to
// Compile (required or optional) can be true.
func (p *Program) Has(entry string) bool { return p.entries[entry].defined }

// Close drops the pooled runtimes, ending their goroutines, and returns at once: it never
// waits for a call. Calls already running finish normally (within their deadlines); later
// calls return ErrClosed. Close is idempotent. A Program dropped without Close keeps its
// idle runtimes and their goroutines.
func (p *Program) Close() {
	idle := p.pool.close()
	for _, sb := range idle {
		sb.stop()
	}
	p.stats.dropped.Add(uint64(len(idle)))
}

// entryNames validates the declared entry points: JavaScript identifiers, each once.
func entryNames(required, optional []string) ([]string, error) {
	all := append(append([]string(nil), required...), optional...)
	for i, name := range all {
		if !isIdentifier(name) {
			return nil, fmt.Errorf("entry point %q is not a JavaScript identifier", name)
		}
		if slices.Contains(all[:i], name) {
			return nil, fmt.Errorf("entry point %q is declared twice", name)
		}
	}
	return all, nil
}

// isIdentifier reports whether s is an ASCII JavaScript identifier.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range []byte(s) {
		ok := c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || i > 0 && isDigit(c)
		if !ok {
			return false
		}
	}
	return true
}

// counters are a Program's statistics.
type counters struct {
	calls, created, retired, dropped, consoleLines, consoleDropped atomic.Uint64
	failed, deadline, outputInvalid, outputTooLarge                atomic.Uint64
	abandoned                                                      atomic.Uint64
	abandonedRunning                                               atomic.Int64
}

// Stats is a snapshot of a Program's counters, for metrics.
type Stats struct {
	// Calls counts calls that reached the script; Failures counts them by failure class.
	Calls    uint64
	Failures map[string]uint64
	// RuntimesCreated counts runtimes built, including the one Compile builds.
	RuntimesCreated uint64
	// RuntimesRetired counts runtimes discarded after Limits.RuntimeUses calls.
	RuntimesRetired uint64
	// RuntimesDropped counts runtimes discarded after a failed or interrupted call, because
	// the pool was full, or by Close.
	RuntimesDropped uint64
	// RuntimesAbandoned counts runtimes whose call returned ClassDeadline without waiting for
	// them, because a built-in (a regular expression, a capped loop) was still running in Go
	// past the deadline; each is discarded when it stops. AbandonedRunning is how many of them
	// have not stopped yet.
	RuntimesAbandoned uint64
	AbandonedRunning  int64
	// ConsoleLines and ConsoleDropped count console lines written and lost to the rate limit.
	ConsoleLines, ConsoleDropped uint64
}

// Stats returns a snapshot of the Program's counters.
func (p *Program) Stats() Stats {
	c := &p.stats
	return Stats{
		Calls: c.calls.Load(),
		Failures: map[string]uint64{
			ClassFailed: c.failed.Load(), ClassDeadline: c.deadline.Load(),
			ClassOutputInvalid: c.outputInvalid.Load(), ClassOutputTooLarge: c.outputTooLarge.Load(),
		},
		RuntimesCreated: c.created.Load(), RuntimesRetired: c.retired.Load(), RuntimesDropped: c.dropped.Load(),
		RuntimesAbandoned: c.abandoned.Load(), AbandonedRunning: c.abandonedRunning.Load(),
		ConsoleLines: c.consoleLines.Load(), ConsoleDropped: c.consoleDropped.Load(),
	}
}

// failure returns the counter of a failure class.
func (c *counters) failure(class string) *atomic.Uint64 {
	switch class {
	case ClassDeadline:
		return &c.deadline
	case ClassOutputInvalid:
		return &c.outputInvalid
	case ClassOutputTooLarge:
		return &c.outputTooLarge
	}
	return &c.failed
}
