package scripting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
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
	program   *goja.Program
	resolver  *goja.Program
	lockdown  *goja.Program
	iterators *goja.Program
	declared  []string             // required and optional entry points, in order
	entries   map[string]entryInfo // the declared entry points; read-only
	limits    Limits
	logger    *slog.Logger
	observer  func(entry, class string, d time.Duration)
	console   *lineLimiter
	pool      pool
	plans     planCache // CallInto's decode plans
	stats     counters
}

// entryInfo is what a call needs to know about its entry point, worked out at Compile.
type entryInfo struct {
	defined     bool // the script defines it as a function
	deadline    time.Duration
	outputBytes int
}

// Compile checks and compiles one classic (non-module) script once, in strict mode, and
// verifies that every name in required is defined as a function (optional ones may be
// absent). It runs the script's top-level code once, in a locked-down runtime that becomes
// the first pooled one; top-level code that throws or outlives the load deadline refuses the
// script. limits are applied as DefaultLimits().Lower(limits). Every refusal wraps
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
	program, err := goja.CompileAST(tree, true)
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
	resolver, err := goja.Compile("<sandbox:entries>", resolverSource(declared), true)
	if err != nil {
		return nil, fmt.Errorf("scripting: compiling the entry resolver: %w", err)
	}
	p := &Program{
		name: name, program: program, resolver: resolver, lockdown: lockdown, iterators: iterators,
		declared: declared, entries: make(map[string]entryInfo, len(declared)),
		limits: limits, logger: o.Logger, observer: o.Observer,
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

	sb, err := newSandbox(context.Background(), p)
	if err != nil {
		var scriptErr *Error
		var notFunction *notFunctionError
		switch {
		case errors.As(err, &scriptErr):
			return nil, invalid("top-level code: %s: %s", scriptErr.Class, scriptErr.Message)
		case errors.As(err, &notFunction):
			return nil, invalid("%v", notFunction)
		}
		return nil, err
	}
	p.stats.created.Add(1)
	var missing []string
	for _, entry := range declared {
		_, ok := sb.entries[entry]
		p.entries[entry] = entryInfo{defined: ok, deadline: limits.deadline(entry), outputBytes: limits.outputBytes(entry)}
		if !ok && slices.Contains(o.Required, entry) {
			missing = append(missing, entry)
		}
	}
	if len(missing) > 0 {
		return nil, invalid("required entry point(s) not defined as functions: %s", strings.Join(missing, ", "))
	}
	p.pool.put(sb)
	return p, nil
}

// Has reports whether the script defines entry as a function. Only entry points declared to
// Compile (required or optional) can be true.
func (p *Program) Has(entry string) bool { return p.entries[entry].defined }

// Close drops the pooled runtimes. Calls already running finish normally; later calls
// return ErrClosed. Close is idempotent.
func (p *Program) Close() {
	p.stats.dropped.Add(uint64(p.pool.close()))
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

// resolverSource is a program that answers, for each entry point, the function the script
// bound to the name, or the typeof string of what else it bound ("undefined" when nothing).
// It reads the script's global bindings whether they are function declarations, var, let
// or const.
func resolverSource(entries []string) string {
	var b strings.Builder
	b.WriteString("({")
	for _, e := range entries {
		fmt.Fprintf(&b, "%q: (typeof %s === 'function' ? %s : typeof %s),", e, e, e, e)
	}
	b.WriteString("})")
	return b.String()
}

// counters are a Program's statistics.
type counters struct {
	calls, created, retired, dropped, consoleLines, consoleDropped atomic.Uint64
	failed, deadline, outputInvalid, outputTooLarge                atomic.Uint64
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
