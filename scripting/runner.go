package scripting

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/dop251/goja"
)

// Every call runs on its runtime's own goroutine (started with the runtime's first job and
// kept with it, so that its grown stack is reused), and its caller waits for that goroutine
// only until the call's alarm rings plus abandonGrace. goja's interrupt stops JavaScript code at
// its next instruction, but not a built-in that is busy in Go: a regular expression that
// backtracks, or one of the capped loops (limits.go). When such a built-in is still running
// at the deadline, the caller returns ClassDeadline at once and abandons the runtime: the
// goroutine keeps it, finishes the built-in, stops at the interrupt and drops the runtime,
// which never goes back to the pool. What it can still spend is bounded: one regular
// expression scan (regexpScanLimit) or one capped built-in, after which every guard throws.

// abandonGrace is how long a caller waits, after the alarm rang, for the call's goroutine to
// stop by itself: JavaScript code stops within microseconds, and waiting for it keeps the
// runtime's own report of the interruption.
const abandonGrace = 20 * time.Millisecond

// The states of a sandbox's job (sandbox.state).
const (
	jobRunning int32 = iota
	jobFinished
	jobAbandoned
)

// job is the work handed to a sandbox's goroutine and its answer. The caller reads the answer
// only after the goroutine finished (supervise returned false).
type job struct {
	// What to run.
	run   func(*Program, *sandbox)
	ctx   context.Context
	entry string
	info  entryInfo
	args  []any
	// A call's answer (runCall).
	out       []byte
	keep, ran bool
	err       error
	// The load's answer (runLoad): what the script bound to each declared entry point.
	kinds []string
}

// supervise runs run(p, sb) on sb's goroutine and waits until it finishes, or until sb's
// alarm has rung and the grace has passed. When the job's context ends first, it rings the
// alarm itself. It reports true when it gave up: sb then belongs to the goroutine, which drops
// it, and the caller must not touch sb.job, nor sb except for its alarm's rung.
func (p *Program) supervise(sb *sandbox, run func(*Program, *sandbox)) (abandoned bool) {
	sb.job.run = run
	sb.state.Store(jobRunning)
	if sb.wake == nil {
		sb.wake = make(chan struct{}, 1)
		go p.serve(sb)
	}
	ctx := sb.job.ctx // nil for a load, which has its deadline only
	var ended <-chan struct{}
	if ctx != nil {
		ended = ctx.Done()
	}
	sb.wake <- struct{}{}
	cancelled := false
	select {
	case <-sb.done:
		return false
	case <-sb.alarm.signal:
	case <-ended:
		sb.alarm.cancel(ctx)
		cancelled = true
	}
	grace := time.NewTimer(p.grace)
	defer grace.Stop()
	select {
	case <-sb.done:
		sb.finishedAfter(cancelled)
		return false
	case <-grace.C:
	}
	p.stats.abandonedRunning.Add(1)
	if !sb.state.CompareAndSwap(jobRunning, jobAbandoned) {
		p.stats.abandonedRunning.Add(-1)
		<-sb.done // it finished just now
		sb.finishedAfter(cancelled)
		return false
	}
	p.stats.abandoned.Add(1)
	return true
}

// finishedAfter settles a job that finished after its alarm rang. When the caller rang it for
// the job's context, the ring may have come after the call disarmed its alarm, leaving an
// interrupt pending in a runtime the call meant to keep: it is dropped instead.
func (sb *sandbox) finishedAfter(cancelled bool) {
	if cancelled {
		sb.job.keep = false
	}
}

// serve is sb's goroutine: it runs each job it is woken for and hands sb back to the waiting
// caller, until stop; when the caller abandoned a job, it ends with it and lets sb go.
func (p *Program) serve(sb *sandbox) {
	for range sb.wake {
		sb.job.run(p, sb)
		if !sb.state.CompareAndSwap(jobRunning, jobFinished) {
			p.stats.abandonedRunning.Add(-1)
			return
		}
		sb.done <- struct{}{}
	}
}

// stop ends sb's goroutine. Only the owner of an idle sb calls it, when it drops sb (never
// for an abandoned one, whose goroutine ends by itself).
func (sb *sandbox) stop() {
	if sb.wake != nil {
		close(sb.wake)
		sb.wake = nil
	}
}

// abandonedMessage describes a call given up at its deadline.
func abandonedMessage(sb *sandbox) string {
	why := "interrupted"
	if i := sb.alarm.rung(); i != nil {
		why = i.message()
	}
	return why + " (its goroutine had not stopped, a built-in still busy or the machine loaded; the runtime is abandoned)"
}

// runCall is the job of a call.
func runCall(p *Program, sb *sandbox) {
	j := &sb.job
	j.out, j.keep, j.ran, j.err = p.run(j.ctx, sb, j.entry, j.info, j.args)
}

// load runs the script's top-level code once in sb, under the load deadline, and answers
// what it bound to each declared entry point: "function", or the typeof string of the value.
// Script failures are *Error values with entry "load".
// On failure sb is dropped.
func (p *Program) load(sb *sandbox) ([]string, error) {
	sb.job = job{}
	if p.supervise(sb, runLoad) {
		return nil, newError("load", ClassDeadline, abandonedMessage(sb))
	}
	kinds, err := sb.job.kinds, sb.job.err
	sb.job = job{}
	if err != nil {
		sb.stop()
	}
	return kinds, err
}

// runLoad is the job of load.
func runLoad(p *Program, sb *sandbox) {
	j := &sb.job
	j.kinds, j.err = sb.load(p.limits.loadDeadline())
}

// resolve reads the scope function's answer: what the script bound to each declared entry
// point. In a reusable scope it also keeps the entry points and freezes all that the
// top-level code built.
func (sb *sandbox) resolve(answer *goja.Object) []string {
	n := len(sb.p.declared)
	kinds := make([]string, n)
	var entries []goja.Callable
	if sb.p.reuse {
		entries = make([]goja.Callable, n)
	}
	for i := range kinds {
		v := answer.Get(strconv.Itoa(i))
		fn, ok := goja.AssertFunction(v)
		switch {
		case ok:
			kinds[i] = "function"
			if entries != nil {
				entries[i] = fn
			}
		default:
			kinds[i] = v.String() // a typeof string
		}
	}
	if entries != nil {
		var values []goja.Value
		for i, length := 0, int(answer.Get("length").ToInteger()); i < length; i++ {
			values = append(values, answer.Get(strconv.Itoa(i)))
		}
		sb.freezeScope(values)
		sb.entries = entries
	}
	return kinds
}

// load is the body of runLoad.
func (sb *sandbox) load(deadline time.Duration) (kinds []string, err error) {
	ctx := context.Background()
	sb.begin(ctx, "load", 0)
	defer func() {
		if r := recover(); r != nil {
			kinds, err = nil, fmt.Errorf("scripting: loading the script: %v", r)
		}
		sb.alarm.disarm()
	}()
	sb.alarm.arm(deadline)
	entries, runErr := sb.scope(sb.global)
	var scriptErr *Error
	if runErr != nil {
		scriptErr = sb.classify("load", runErr, false)
	} else {
		kinds = sb.resolve(entries.(*goja.Object))
	}
	if sb.alarm.disarm() && scriptErr == nil {
		// The code finished just as the alarm went off: an interrupt may be pending.
		scriptErr = newError("load", ClassDeadline, "the top-level code reached its deadline")
	}
	if scriptErr != nil {
		return nil, scriptErr
	}
	sb.vm.ClearInterrupt()
	return kinds, nil
}
