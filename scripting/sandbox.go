package scripting

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/dop251/goja"
)

// sandbox is one locked-down goja runtime with the script's scope function (scope.go). The
// pool hands it to one call at a time, which runs it on a goroutine of its own (supervise).
// It is thrown away after any failure that could leave it in doubt (see Program.Call), so
// per-call state never has to be repaired after a panic.
type sandbox struct {
	p  *Program
	vm *goja.Runtime
	// scope runs the script's top-level code in a fresh scope and returns its entry points;
	// global is the global object, the `this` of the top-level code. In a reusable scope
	// (scope_reuse.go), entries holds the entry points of its one run, by index.
	scope   goja.Callable
	global  goja.Value
	entries []goja.Callable
	// job is the work of the current call or load, handed to sb's goroutine through wake
	// (nil until the first job); state and done tell the caller whether the goroutine
	// finished or was abandoned (supervise).
	job   job
	wake  chan struct{}
	state atomic.Int32
	done  chan struct{}
	// serialize writes its argument as JSON into out, within outLimit; it is a native
	// function called through goja so that exceptions thrown by getters and toJSON methods
	// come back as errors.
	serialize goja.Callable
	// describe turns a thrown value into a loggable message, also inside goja's try.
	describe goja.Callable
	// rangeError constructs RangeErrors for the sandbox caps.
	rangeError *goja.Object
	// objectPrototype is Object.prototype, given to argument objects (finishArgObject).
	objectPrototype *goja.Object
	// join is goja's original Array.prototype.join, which concatenates efficiently.
	join native
	// regexpCtor is RegExp; exec is the guarded RegExp.prototype.exec (guards_regexp.go).
	regexpCtor *goja.Object
	exec       native
	uses       int
	alarm      alarm
	// args holds the converted arguments of the current call (cleared after it), result
	// the value being serialized: the slices goja's calls take, kept from call to call.
	args   []goja.Value
	result [1]goja.Value

	// Per-call state, reset by begin.
	ctx       context.Context
	entry     string
	iterSteps map[*goja.Object]int
	joinStack []*goja.Object
	out       []byte
	outLimit  int
	outStack  []*goja.Object
	tooLarge  bool
	// interrupted holds the interruption a Go loop of the sandbox's guards ended the call
	// with (throwInterrupted), so that classify reports the deadline, not the thrown error.
	interrupted *interruption
	// quiet silences the console while a call runs the top-level code again (console.go).
	quiet bool
	// tainted is set when the sandbox itself throws into the script (a cap, a host helper's
	// TypeError, an assignment to a frozen built-in): such a call's runtime is dropped.
	tainted bool
}

// newSandbox builds a runtime, locks it down and evaluates the scope function, which runs
// none of the script's code. Its failures are the sandbox's own, as plain errors.
func newSandbox(p *Program) (sb *sandbox, err error) {
	vm := goja.New()
	vm.SetMaxCallStackSize(p.limits.CallStackFrames)
	sb = &sandbox{p: p, vm: vm, iterSteps: make(map[*goja.Object]int), alarm: newAlarm(vm), done: make(chan struct{}, 1)}

	// The installation code below is Go calling goja outside any script; a panic there is a
	// bug in this package, reported as an error rather than a crash.
	defer func() {
		if r := recover(); r != nil {
			sb, err = nil, fmt.Errorf("scripting: preparing a runtime: %v", r)
		}
	}()
	if err := sb.install(); err != nil {
		return nil, err
	}
	fn, err := vm.RunProgram(p.scope)
	if err != nil {
		return nil, fmt.Errorf("scripting: evaluating the scope function: %w", err)
	}
	scope, ok := goja.AssertFunction(fn)
	if !ok {
		return nil, fmt.Errorf("scripting: the scope program is not a function")
	}
	freeze := vm.Get("Object").ToObject(vm).Get("freeze").Export().(native)
	freeze(goja.FunctionCall{Arguments: []goja.Value{fn}})
	sb.scope, sb.global = scope, vm.GlobalObject()
	return sb, nil
}

// install replaces and adds everything the lockdown program then freezes: the capped
// built-ins, JSON, the host helpers. Then it runs the lockdown program itself.
func (sb *sandbox) install() error {
	vm := sb.vm
	sb.rangeError = vm.Get("RangeError").ToObject(vm)
	sb.objectPrototype = vm.Get("Object").ToObject(vm).Get("prototype").ToObject(vm)
	sb.join = vm.Get("Array").ToObject(vm).Get("prototype").ToObject(vm).Get("join").Export().(native)
	sb.installJSON()
	sb.installStringGuards()
	sb.installArrayGuards()
	sb.installIteratorCaps()
	sb.installRegExpGuards()
	sb.installHelpers()

	ser, _ := goja.AssertFunction(vm.ToValue(sb.serializeOutput))
	desc, _ := goja.AssertFunction(vm.ToValue(sb.describeThrown))
	sb.serialize, sb.describe = ser, desc

	lockdown, err := vm.RunProgram(sb.p.lockdown)
	if err != nil {
		return fmt.Errorf("scripting: lockdown: %w", err)
	}
	fn, ok := goja.AssertFunction(lockdown)
	if !ok {
		return fmt.Errorf("scripting: lockdown program is not a function")
	}
	syntaxOnly, err := fn(goja.Undefined(), sb.lockdownHost())
	if err != nil {
		return fmt.Errorf("scripting: lockdown: %w", err)
	}
	var roots []*goja.Object
	if err := vm.ExportTo(syntaxOnly, &roots); err != nil {
		return fmt.Errorf("scripting: lockdown roots: %w", err)
	}
	sb.freezeBuiltins(roots)
	return nil
}

// notFunctionError reports an entry point bound to something other than a function.
type notFunctionError struct{ entry, kind string }

func (e *notFunctionError) Error() string {
	return "entry point " + e.entry + " is a " + e.kind + ", not a function"
}

// begin resets the per-call state.
func (sb *sandbox) begin(ctx context.Context, entry string, outLimit int) {
	sb.ctx, sb.entry, sb.outLimit, sb.tooLarge, sb.tainted, sb.interrupted, sb.quiet = ctx, entry, outLimit, false, false, nil, false
	clear(sb.iterSteps)
	sb.joinStack = sb.joinStack[:0]
	sb.out = sb.out[:0]
}

// throwRange throws a RangeError into the running script.
func (sb *sandbox) throwRange(format string, args ...any) {
	sb.tainted = true
	obj, err := sb.vm.New(sb.rangeError, sb.vm.ToValue(fmt.Sprintf(format, args...)))
	if err != nil {
		panic(err)
	}
	panic(obj)
}

// throwInterrupted ends a call whose alarm rang while a built-in looped in Go. The thrown
// RangeError unwinds the loop; should the script catch it, goja's own interrupt stops the
// script at its next instruction.
func (sb *sandbox) throwInterrupted(i interruption) {
	sb.interrupted = &i
	sb.throwRange("%s", i.message())
}

// throwType throws a TypeError into the running script.
func (sb *sandbox) throwType(format string, args ...any) {
	sb.tainted = true
	panic(sb.vm.NewTypeError(fmt.Sprintf(format, args...)))
}

// lengthOf is LengthOfArrayLike(ToObject(v)) as a float (it may exceed int range).
func (sb *sandbox) lengthOf(v goja.Value) float64 {
	l := v.ToObject(sb.vm).Get("length")
	if l == nil {
		return 0
	}
	return toLength(l.ToFloat())
}

// checkLength throws a RangeError when n exceeds Limits.ArrayLength.
func (sb *sandbox) checkLength(what string, n float64) {
	if n > float64(sb.p.limits.ArrayLength) {
		sb.throwRange("%s: length %.0f exceeds the sandbox limit of %d", what, n, sb.p.limits.ArrayLength)
	}
}

// checkString throws a RangeError when a string of n code units would exceed Limits.StringBytes.
func (sb *sandbox) checkString(what string, n float64) {
	if n > float64(sb.p.limits.StringBytes) {
		sb.throwRange("%s: result of %.0f characters exceeds the sandbox limit of %d", what, n, sb.p.limits.StringBytes)
	}
}

// strLen is the length of a JavaScript string value in UTF-16 code units.
func strLen(v goja.Value) int {
	if s, ok := v.(goja.String); ok {
		return s.Length()
	}
	return len(v.String())
}

// isNullish reports whether v is undefined or null (or absent).
func isNullish(v goja.Value) bool {
	return v == nil || goja.IsUndefined(v) || goja.IsNull(v)
}

// callJS calls fn and rethrows its exception (or interrupt) into the running script.
func callJS(fn goja.Callable, this goja.Value, args ...goja.Value) goja.Value {
	v, err := fn(this, args...)
	if err != nil {
		panic(err)
	}
	return v
}

// native is the signature of goja's built-in functions.
type native = func(goja.FunctionCall) goja.Value

// replaceMethod replaces obj[name], a built-in function, with the function build returns
// from the original; the replacement keeps the original's name and length.
func (sb *sandbox) replaceMethod(obj *goja.Object, name string, build func(orig native) native) {
	origObj := obj.Get(name).ToObject(sb.vm)
	orig, ok := origObj.Export().(native)
	if !ok {
		panic(fmt.Sprintf("%s is not a native function", name))
	}
	obj.DefineDataProperty(name, sb.nativeLike(origObj, build(orig)), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// replaceSymbolMethod is replaceMethod for a symbol-keyed method.
func (sb *sandbox) replaceSymbolMethod(obj *goja.Object, sym *goja.Symbol, build func(orig native) native) {
	origObj := obj.GetSymbol(sym).ToObject(sb.vm)
	orig, ok := origObj.Export().(native)
	if !ok {
		panic(fmt.Sprintf("%s is not a native function", sym))
	}
	obj.DefineDataPropertySymbol(sym, sb.nativeLike(origObj, build(orig)), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// nativeLike wraps fn as a function object with the name and length of like.
func (sb *sandbox) nativeLike(like *goja.Object, fn native) *goja.Object {
	obj := sb.vm.ToValue(fn).ToObject(sb.vm)
	obj.DefineDataProperty("name", like.Get("name"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	obj.DefineDataProperty("length", like.Get("length"), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return obj
}

// namedNative builds a function object with the given name and length.
func (sb *sandbox) namedNative(name string, length int, fn any) *goja.Object {
	obj := sb.vm.ToValue(fn).ToObject(sb.vm)
	obj.DefineDataProperty("name", sb.vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	obj.DefineDataProperty("length", sb.vm.ToValue(length), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE)
	return obj
}
