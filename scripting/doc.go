// Package scripting is Switchboard's JavaScript sandbox: the only package that imports goja.
//
// It owns compiling an adapter script once (Compile), a pool of prepared runtimes per script
// (Program), the sandbox limits of SPEC 3.3 (Limits), the lockdown of each runtime and the
// host helpers scripts may use (encoding, crypto, console).
//
// The lockdown, applied to every runtime before the script's code runs: eval and the
// Function, GeneratorFunction and AsyncFunction constructors throw however they are reached;
// Proxy, BigInt (literals are refused at compile time), typed arrays, ArrayBuffer and
// DataView are removed; there are no timers, modules, network or files; every built-in and
// host object is frozen, every built-in global binding is read-only and the global object is
// not extensible, so that nothing a call does to them reaches the next call; the built-ins
// that goja runs as uninterruptible Go loops or allocations check their size first
// (Limits.StringBytes, Limits.ArrayLength, a step cap on every built-in iterator, a nesting
// cap on JSON and on join); regular expressions are bounded per scan (guards_regexp.go); the
// call stack is capped (Limits.CallStackFrames). Each call runs under a deadline and the
// caller's context, both enforced with goja's Interrupt.
//
// Calls are independent: nothing one call does is visible to a later one. The script's code
// is compiled as the body of a function, its scope (scope.go). When its top-level code only
// declares functions and data, and no function ever assigns to what it declared (every
// bundled adapter), the scope runs once per runtime and everything it built is frozen
// (scope_reuse.go): a write to a table, to a function's property, to the global object or
// to a built-in throws a TypeError. Any other script runs its top-level code again, in a
// fresh scope, before every call, so that what a call leaves in a top-level variable, in an
// object the top-level code built or in a closure dies with it; that costs about a
// microsecond per function the script declares, and its console output is written once,
// when Compile loads the script. Freezing alone cannot reach the variables a closure keeps,
// hence the second path; a fresh runtime per call would cost about 2 ms of CPU
// (BenchmarkNewRuntime), more than a hundred times a call.
//
// Every call runs on its runtime's own goroutine, and its caller waits for it only until the
// deadline (plus a short grace): a built-in still busy in Go by then (a backtracking regular
// expression) does not hold the caller, who returns ClassDeadline and abandons the runtime,
// which is dropped once it stops (runner.go). Neither Close nor a caller whose context ends
// waits for a running script.
//
// Data crosses the boundary as plain values only: arguments are Go values made of maps (or
// Object member lists), slices, strings, numbers, booleans and nil, turned into fresh JavaScript
// objects for every call; results come back as JSON produced by the package's own serializer,
// never by a function the script could have replaced. Script failures are *Error values carrying
// one of the failure classes of SPEC 3.3 (ClassFailed, ClassDeadline, ClassOutputInvalid,
// ClassOutputTooLarge).
//
// What the sandbox does not stop: goja has no memory limit. A script cannot make one
// built-in call allocate more than Limits.StringBytes or walk more than Limits.ArrayLength
// elements, but JavaScript code that grows strings or arrays in a loop (s += s) is bounded
// only by the per-call deadline. An abandoned runtime goes on using CPU and memory after its
// call returned, until the built-in it is in ends: at most one regular expression scan
// (regexpScanLimit, 1 s, which regexp2 notices up to 200 ms late) or one capped built-in
// walk (about 150 ms), since every guard throws once the alarm has rung; a script
// that is abandoned on every call therefore costs that much CPU per call, however short its
// deadline. A scan that regexp2 gives up early, because its clock lagged by more than 0.9 s
// on a starved machine, answers "no match" to the script (guards_regexp.go). The
// process-level backstops are GOMEMLIMIT and the container's memory limit; the package
// review is the trust boundary for adapter code.
//
// scripting knows nothing of messages, providers or storage: it must never import engine,
// packages, providers, store or cmd, and nothing but scripting may import goja. It imports one
// leaf package of the repository, packages/jsonread (the one JSON reader, on the standard
// library only), for ParseJSON and CallInto's decode.
package scripting
