// Package importrules holds the repository's import rules as one table (Rules, Exclusives) and
// the checker that holds every package to them; its test runs the checker on the repository,
// so CI fails when a package imports across a boundary docs/architecture.md ("Import rules")
// forbids. It reads the packages with `go list`, and imports only the standard library.
package importrules
