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
	stopCtx  func() bool
	armed    bool
}

// arm starts the deadline timer and, when ctx can end, a context watcher.
func (a *alarm) arm(ctx context.Context, d time.Duration) {
	a.deadline.Store(int64(d))
	if a.timer == nil {
		a.timer = time.AfterFunc(d, func() {
			a.vm.Interrupt(interruption{deadline: time.Duration(a.deadline.Load())})
		})
	} else {
		a.timer.Reset(d)
	}
	a.stopCtx = nil
	if ctx.Done() != nil {
		vm := a.vm
		a.stopCtx = context.AfterFunc(ctx, func() { vm.Interrupt(interruption{ctxErr: ctx.Err()}) })
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
