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
// host object is frozen and every built-in global binding is read-only, so that nothing a
// call does to them reaches the next call; the built-ins that goja runs as uninterruptible Go
// loops or allocations check their size first (Limits.StringBytes, Limits.ArrayLength, a
// step cap on every built-in iterator, a nesting cap on JSON and on join); the call stack is
// capped (Limits.CallStackFrames). Each call runs under a deadline and the caller's context,
// both enforced with goja's Interrupt.
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
// only by the per-call deadline; a RegExp that needs backtracking (backreferences,
// lookaround) runs in goja's regexp2 without a time limit. The process-level backstops are
// GOMEMLIMIT and the container's memory limit; the package review is the trust boundary for
// adapter code.
//
// scripting knows nothing of messages, providers or storage: it must never import engine,
// packages, providers, store or cmd, and nothing but scripting may import goja. It imports one
// leaf package of the repository, packages/jsonread (the one JSON reader, on the standard
// library only), for ParseJSON and CallInto's decode.
package scripting
