// Package scripting is Switchboard's JavaScript sandbox: the only package that imports goja.
//
// It owns compiling an adapter script once (Compile), a pool of prepared runtimes per script
// (Program), the sandbox limits of SPEC 3.3 (Limits), the lockdown of each runtime (no eval,
// no Function constructors, frozen built-ins, capped string and array built-ins, no timers,
// no modules, no network, no files) and the host helpers scripts may use (encoding, crypto,
// console).
//
// Data crosses the boundary as plain values only: arguments are Go values made of maps,
// slices, strings, numbers, booleans and nil, turned into fresh JavaScript objects for every
// call; results come back as JSON produced by the package's own serializer, never by a
// function the script could have replaced. Script failures are *Error values carrying one of
// the failure classes of SPEC 3.3 (ClassFailed, ClassDeadline, ClassOutputInvalid,
// ClassOutputTooLarge).
//
// What the sandbox does not stop: goja has no memory limit. A script cannot make one
// built-in call allocate more than Limits.StringBytes or walk more than Limits.ArrayLength
// elements, but JavaScript code that grows strings or arrays in a loop (s += s) is bounded
// only by the per-call deadline. The process-level backstop is GOMEMLIMIT and the
// container's memory limit; the package review is the trust boundary for adapter code.
//
// scripting knows nothing of messages, providers or storage: it must never import engine,
// packages, providers, store or cmd, and nothing but scripting may import goja.
package scripting
