// Package cputime reads the CPU time the process has used: the admission policy measures with
// it how busy the machine is, and the benchmarks report CPU time per operation with it. It
// imports only the standard library, so any package may use it.
package cputime
