package scripting

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// interruption is the value a sandbox is interrupted with.
type interruption struct {
	deadline time.Duration // set when the deadline passed
	ctxErr   error         // set when the caller's context ended
}

// message describes the interruption for Error.Message.
func (i interruption) message() string {
	if i.ctxErr != nil {
		return "interrupted: the caller's context ended (" + i.ctxErr.Error() + ")"
	}
	return fmt.Sprintf("interrupted: exceeded its deadline of %s", i.deadline)
}

// alarm interrupts a running sandbox when its deadline passes or its context ends. Each
// sandbox keeps one timer and re-arms it for every call. The context is watched by the caller,
// which waits for the call anyway (supervise) and rings the alarm when it ends: a watcher
// registered on the context for every call (context.AfterFunc) cost five allocations and a
// map insertion and deletion in the parent context per call.
type alarm struct {
	vm       *goja.Runtime
	timer    *time.Timer
	deadline atomic.Int64 // of the current arming, read by the timer's goroutine
	due      time.Time    // when the current arming's deadline passes (overdue)
	rang     atomic.Pointer[interruption]
	// signal receives a value when the alarm rings: the caller waiting for the call's
	// goroutine (supervise) selects on it.
	signal chan struct{}
	armed  bool
}

// newAlarm is the alarm of a sandbox running on vm.
func newAlarm(vm *goja.Runtime) alarm {
	return alarm{vm: vm, signal: make(chan struct{}, 1)}
}

// ring records why the sandbox is interrupted, for the Go loops that check (rung), then
// interrupts the runtime, which stops JavaScript code at its next instruction, and tells
// the waiting caller. Only the first ring of an arming is recorded.
func (a *alarm) ring(i interruption) {
	a.rang.CompareAndSwap(nil, &i)
	a.vm.Interrupt(*a.rang.Load())
	select {
	case a.signal <- struct{}{}:
	default:
	}
}

// rung reports the interruption of the current arming, or nil while none has happened. A
// built-in that loops in Go (a spread driving an iterator) never reaches an instruction
// where goja checks its interrupt flag, so the sandbox's guards call rung between steps.
func (a *alarm) rung() *interruption {
	return a.rang.Load()
}

// ringIfOverdue rings the alarm when the deadline of the current arming has passed, even if
// the timer has not fired yet (its goroutine may lag on a loaded machine). A guard that has
// just left a long Go call uses it, so that what that call answered after the deadline never
// reaches the script.
func (a *alarm) ringIfOverdue() {
	if a.armed && a.rang.Load() == nil && !time.Now().Before(a.due) {
		a.ring(interruption{deadline: time.Duration(a.deadline.Load())})
	}
}

// arm starts the deadline timer.
func (a *alarm) arm(d time.Duration) {
	a.deadline.Store(int64(d))
	a.due = time.Now().Add(d)
	a.rang.Store(nil)
	select {
	case <-a.signal: // a ring of an earlier arming nobody waited for
	default:
	}
	if a.timer == nil {
		a.timer = time.AfterFunc(d, func() {
			a.ring(interruption{deadline: time.Duration(a.deadline.Load())})
		})
	} else {
		a.timer.Reset(d)
	}
	a.armed = true
}

// cancel rings the alarm for a caller's context that ended (supervise calls it).
func (a *alarm) cancel(ctx context.Context) { a.ring(interruption{ctxErr: ctx.Err()}) }

// disarm stops the timer and reports whether it has fired (or is firing), or the alarm rang
// otherwise (the sandbox itself, or the caller for its context), in which case the runtime
// may hold a pending interrupt and must not be reused. When none of them did, the timer can
// no longer interrupt; a caller that rings later, for its context, drops the runtime itself
// (supervise). Disarming twice is harmless.
func (a *alarm) disarm() (fired bool) {
	if !a.armed {
		return false
	}
	a.armed = false
	fired = !a.timer.Stop()
	return fired || a.rang.Load() != nil
}
