// Package cputime reads the CPU time the process has used and, on Linux, how busy the whole
// machine is: the admission policy measures with both whether the CPU is saturated, and the
// benchmarks report CPU time per operation with the first. It imports only the standard
// library, so any package may use it.
package cputime
