package scripting

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dop251/goja"
)

// Call runs entry with args and returns the script's return value serialized as JSON
// (null for null or undefined; functions and symbols also become null).
//
// Each argument must be a plain Go value: nil, bool, string, any integer or float type,
// json.Number, json.RawMessage, map[string]any, Object, []any, or by reflection any map with
// string keys, slice or array of those and named types of those kinds; anything else (a struct,
// a pointer) goes through encoding/json first. The keys of a map (and the members of an Object)
// arrive in sorted order; nesting deeper than 128 levels is refused with ErrInput. The script
// receives fresh plain objects built for this call: what it does to them reaches neither the
// caller nor the next call. The call runs in a runtime taken from the pool, on the runtime's
// own goroutine, and nothing an earlier call did to the script's own state is visible to it:
// either it first runs the script's top-level code again, in a fresh scope, or that code ran
// once in the runtime and all it built is frozen (scope.go). The call runs under
// Limits.Deadlines[entry] and until ctx ends, whichever comes first; both interrupt the
// script with ClassDeadline, and Call returns by then (plus abandonGrace) even when a
// built-in is still busy in Go, whose runtime it then abandons (runner.go). A result whose
// JSON exceeds Limits.OutputBytes[entry] is refused with
// ClassOutputTooLarge, one that cannot be serialized with ClassOutputInvalid, and anything the
// script throws with ClassFailed. Script failures are *Error values, whose message has the
// input's strings redacted; ErrNoEntry, ErrClosed and ErrInput are not script failures.
//
// Call is safe for concurrent use. A runtime goes back to the pool after a call that
// succeeded or that failed only because the script threw; it is dropped after an
// interrupt, an exhausted call stack, a sandbox cap or host-helper error, an assignment to a
// frozen built-in or a result that could not be serialized; it is abandoned when it outlives
// the deadline; and it is retired after Limits.RuntimeUses calls.
func (p *Program) Call(ctx context.Context, entry string, args ...any) (json.RawMessage, error) {
	start := p.clock()
	sb, out, keep, ran, err := p.call(ctx, entry, args)
	if err == nil {
		out = bytes.Clone(out)
	}
	p.release(sb, keep)
	if ran {
		p.observe(entry, err, start)
	}
	return out, redactError(err, args)
}

// CallInto is Call followed by a strict decode of the result into out, a non-nil pointer:
// unknown members or wrong types fail with ClassOutputInvalid (encoding/json matches member
// names case-insensitively). A JSON null result leaves out untouched and returns
// (false, nil); a decoded result returns (true, nil).
func (p *Program) CallInto(ctx context.Context, entry string, out any, args ...any) (bool, error) {
	start := p.clock()
	sb, raw, keep, ran, err := p.call(ctx, entry, args)
	// raw is the runtime's own buffer: it is decoded before the runtime goes back.
	defer p.release(sb, keep)
	decoded := false
	if err == nil && !bytes.Equal(raw, []byte("null")) {
		if derr := p.plans.decodeStrict(raw, out); derr != nil {
			var invalid *json.InvalidUnmarshalError
			if errors.As(derr, &invalid) { // the caller's mistake, not the script's
				if ran {
					p.observe(entry, nil, start)
				}
				return false, fmt.Errorf("scripting: CallInto %s: %w", entry, derr)
			}
			err = newError(entry, ClassOutputInvalid, "the result does not match the expected shape: "+derr.Error())
		} else {
			decoded = true
		}
	}
	if ran {
		p.observe(entry, err, start)
	}
	return decoded, redactError(err, args)
}

// Decode decodes a result of Call into out exactly as CallInto does, returning
// encoding/json's error (DisallowUnknownFields) rather than a script failure: for a caller
// that must look at the result's shape first. It uses the Program's decode plans.
func (p *Program) Decode(raw json.RawMessage, out any) error {
	return p.plans.decodeStrict(raw, out)
}

// redactError removes the input from the message of a script error (see redact).
func redactError(err error, args []any) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		redact(e, args)
	}
	return err
}

// clock is the start of a call, read only when an Observer will want its duration.
func (p *Program) clock() time.Time {
	if p.observer == nil {
		return time.Time{}
	}
	return time.Now()
}

// observe counts a call that reached the script and tells the Observer.
func (p *Program) observe(entry string, err error, start time.Time) {
	p.stats.calls.Add(1)
	class := ClassOf(err)
	if class != "" {
		p.stats.failure(class).Add(1)
	}
	if p.observer != nil {
		p.observer(entry, class, time.Since(start))
	}
}

// call runs one call; ran reports whether it got as far as the script. On success out is
// the runtime's own buffer, valid until the caller gives the runtime back with
// release(sb, keep); sb is nil when no runtime was taken.
func (p *Program) call(ctx context.Context, entry string, args []any) (sb *sandbox, out []byte, keep, ran bool, err error) {
	info := p.entries[entry]
	if !info.defined {
		return nil, nil, false, false, fmt.Errorf("scripting %s: %w: %q", p.name, ErrNoEntry, entry)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, false, true, newError(entry, ClassDeadline, "the caller's context ended before the call ("+err.Error()+")")
	}
	sb, closed := p.pool.get()
	if closed {
		return nil, nil, false, false, fmt.Errorf("scripting %s: %w", p.name, ErrClosed)
	}
	if sb == nil {
		if sb, err = p.newRuntime(entry); err != nil {
			return nil, nil, false, err != nil && ClassOf(err) != "", err
		}
	}
	sb.job = job{ctx: ctx, entry: entry, info: info, args: args}
	if p.supervise(sb, runCall) {
		// The runtime now belongs to its goroutine, which drops it when it stops.
		return nil, nil, false, true, newError(entry, ClassDeadline, abandonedMessage(sb))
	}
	j := &sb.job
	return sb, j.out, j.keep, j.ran, j.err
}

// newRuntime builds a runtime for a call of entry; in a reusable scope it also runs the
// top-level code (which can only fail as it did not at Compile: out of time).
func (p *Program) newRuntime(entry string) (*sandbox, error) {
	sb, err := newSandbox(p)
	if err != nil {
		return nil, err
	}
	p.stats.created.Add(1)
	if p.reuse {
		if _, err := p.load(sb); err != nil {
			var scriptErr *Error
			if errors.As(err, &scriptErr) {
				scriptErr.Entry, scriptErr.Message = entry, truncate("top-level code: "+scriptErr.Message, maxMessageBytes)
			}
			return nil, err
		}
	}
	return sb, nil
}

// run converts the arguments, calls the entry point under the alarm and serializes the
// result into sb.out; keep reports whether the runtime may be used again.
func (p *Program) run(ctx context.Context, sb *sandbox, entry string, info entryInfo, args []any) (out []byte, keep, ran bool, err error) {
	sb.begin(ctx, entry, info.outputBytes)
	defer func() {
		// A panic that escapes goja is a bug in this package or in goja: the call fails,
		// the runtime is dropped, the process stays up.
		if r := recover(); r != nil {
			out, keep, ran, err = nil, false, true, newError(entry, ClassFailed, fmt.Sprintf("internal error: %v", r))
		}
		sb.alarm.disarm()
		clear(sb.args) // the arguments are garbage once the call is over
	}()

	jsArgs := sb.args[:0]
	for i, a := range args {
		v, err := sb.toJS(a, 0)
		if err != nil {
			sb.args = jsArgs
			// No script ran: the runtime is kept.
			return nil, true, false, fmt.Errorf("scripting %s %s: argument %d: %w", p.name, entry, i+1, err)
		}
		jsArgs = append(jsArgs, v)
	}
	sb.args = jsArgs

	sb.alarm.arm(info.deadline)
	res, callErr, topLevel := sb.enter(info, jsArgs)
	serializing := callErr == nil
	if serializing {
		sb.result[0] = res // passed in a slice the sandbox keeps: no allocation
		_, callErr = sb.serialize(goja.Undefined(), sb.result[:]...)
		sb.result[0] = nil
	}
	var scriptErr *Error
	if callErr != nil {
		scriptErr = sb.classify(entry, callErr, serializing) // may run script code: still armed
		if topLevel {
			scriptErr.Message = truncate("top-level code: "+scriptErr.Message, maxMessageBytes)
		}
	}
	if !sb.alarm.disarm() { // else the runtime may hold an interrupt: drop it
		sb.vm.ClearInterrupt()
		// An exception the script threw (or a built-in threw at its request) leaves a sound
		// runtime: keep it. Anything the sandbox itself refused, an exhausted call stack
		// and a failure to serialize drop it.
		keep = scriptErr == nil || isException(callErr) && !sb.tainted && !serializing
	}
	if scriptErr != nil {
		return nil, keep, true, scriptErr
	}
	return sb.out, keep, true, nil
}

// isException reports whether err is (or wraps) a JavaScript exception.
func isException(err error) bool {
	var ex *goja.Exception
	return errors.As(err, &ex)
}

// release returns a runtime to the pool after a clean call, or drops it; a nil sb (no
// runtime was taken) is ignored.
func (p *Program) release(sb *sandbox, keep bool) {
	if sb == nil {
		return
	}
	sb.ctx, sb.job = nil, job{}
	switch {
	case !keep:
		p.stats.dropped.Add(1)
	case sb.uses+1 >= p.limits.RuntimeUses:
		p.stats.retired.Add(1)
	default:
		sb.uses++
		if p.pool.put(sb) {
			return
		}
		p.stats.dropped.Add(1)
	}
	sb.stop()
}

// enter calls the entry point with args: in a reusable scope the one its runtime resolved,
// else the one the scope function answers after running the script's top-level code in a
// fresh scope. topLevel reports a failure of the top-level code (or an entry point that is
// not a function this time).
func (sb *sandbox) enter(info entryInfo, args []goja.Value) (res goja.Value, err error, topLevel bool) {
	if sb.entries != nil {
		res, err = sb.entries[info.index](goja.Undefined(), args...)
		return res, err, false
	}
	sb.quiet = true
	entries, err := sb.scope(sb.global)
	sb.quiet = false
	if err != nil {
		return nil, err, true
	}
	v := entries.(*goja.Object).Get(info.key)
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, &notFunctionError{entry: sb.entry, kind: v.String()}, true
	}
	res, err = fn(goja.Undefined(), args...)
	return res, err, false
}

// classify turns an error from goja into a script failure.
func (sb *sandbox) classify(entry string, err error, serializing bool) *Error {
	var interrupted *goja.InterruptedError
	if errors.As(err, &interrupted) {
		if i, ok := interrupted.Value().(interruption); ok {
			return newError(entry, ClassDeadline, i.message())
		}
		return newError(entry, ClassDeadline, "interrupted")
	}
	if sb.interrupted != nil {
		return newError(entry, ClassDeadline, sb.interrupted.message())
	}
	class := ClassFailed
	if serializing {
		class = ClassOutputInvalid
		if sb.tooLarge {
			return newError(entry, ClassOutputTooLarge, fmt.Sprintf("the result exceeds %d bytes of JSON", sb.outLimit))
		}
	}
	var overflow *goja.StackOverflowError
	if errors.As(err, &overflow) {
		return newError(entry, class, fmt.Sprintf("the call stack exceeded %d frames%s", sb.p.limits.CallStackFrames, sb.p.where(overflow.Stack())))
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		msg := "uncaught exception (it could not be described)"
		if v, derr := sb.describe(goja.Undefined(), ex.Value()); derr == nil {
			msg = v.String()
		}
		return newError(entry, class, msg+sb.p.where(ex.Stack()))
	}
	return newError(entry, class, err.Error())
}

// describeThrown renders a thrown value: "Name: message" for errors, the text of a thrown
// string, JSON for other values. It is called through goja so that getters that throw or
// loop are contained.
func (sb *sandbox) describeThrown(call goja.FunctionCall) goja.Value {
	return sb.vm.ToValue(sb.consoleFormat(call.Argument(0), maxMessageBytes))
}

// where locates the innermost frame of the script in a stack, as " at FUNC (FILE:LINE:COL)"
// (frames of built-ins and of the sandbox's own programs are skipped).
func (p *Program) where(stack []goja.StackFrame) string {
	for i := range stack {
		f := &stack[i]
		if f.SrcName() != p.name {
			continue
		}
		pos := f.Position()
		return fmt.Sprintf(" at %s (%s:%d:%d)", f.FuncName(), pos.Filename, pos.Line, pos.Column)
	}
	return ""
}
