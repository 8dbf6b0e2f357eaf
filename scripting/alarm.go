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
// sandbox keeps one timer and re-arms it for every call.
type alarm struct {
	vm       *goja.Runtime
	timer    *time.Timer
	deadline atomic.Int64 // of the current arming, read by the timer's goroutine
	rang     atomic.Pointer[interruption]
	stopCtx  func() bool
	armed    bool
}

// ring records why the sandbox is interrupted, for the Go loops that check (rung), then
// interrupts the runtime, which stops JavaScript code at its next instruction.
func (a *alarm) ring(i interruption) {
	a.rang.Store(&i)
	a.vm.Interrupt(i)
}

// rung reports the interruption of the current arming, or nil while none has happened. A
// built-in that loops in Go (a spread driving an iterator) never reaches an instruction
// where goja checks its interrupt flag, so the sandbox's guards call rung between steps.
func (a *alarm) rung() *interruption {
	return a.rang.Load()
}

// arm starts the deadline timer and, when ctx can end, a context watcher.
func (a *alarm) arm(ctx context.Context, d time.Duration) {
	a.deadline.Store(int64(d))
	a.rang.Store(nil)
	if a.timer == nil {
		a.timer = time.AfterFunc(d, func() {
			a.ring(interruption{deadline: time.Duration(a.deadline.Load())})
		})
	} else {
		a.timer.Reset(d)
	}
	a.stopCtx = nil
	if ctx.Done() != nil {
		a.stopCtx = context.AfterFunc(ctx, func() { a.ring(interruption{ctxErr: ctx.Err()}) })
	}
	a.armed = true
}

// disarm stops both watchers and reports whether either one has fired (or is firing), in
// which case the runtime may hold a pending interrupt and must not be reused. When neither
// fired, no Interrupt can happen any more and ClearInterrupt is safe. Disarming twice is
// harmless.
func (a *alarm) disarm() (fired bool) {
	if !a.armed {
		return false
	}
	a.armed = false
	fired = !a.timer.Stop()
	if a.stopCtx != nil && !a.stopCtx() {
		fired = true
	}
	return fired
}
