// Package bench is the harness of `switchboard bench`: it copies a package, has the command
// wire a whole stack on loopback (StartStack), drives it through the HTTP API with concurrent
// callers holding real tokens, reads every message back until it is final, and summarizes the
// run (Result), optionally with its raw samples and a chart. docs/benchmarks.md describes the
// scenarios, the flags and the figures.
//
// The package measures; it never wires. It must not build a store, a provider or a dispatcher
// of its own: what it measures is what the command hands it.
package bench
