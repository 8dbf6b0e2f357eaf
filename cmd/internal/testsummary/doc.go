// Command testsummary runs `go test -json` (or reads its events on standard input) and prints
// what go test prints without -json: the summary line of each package, and the whole output of
// the tests that failed. At the end it lists the tests that skipped, grouped by their reason (the
// message given to t.Skip, which says what the test needs), so that a run that passed without a
// database or a browser says so instead of passing in silence. `make test` runs the suite
// through it (README.md, "Development").
//
//	testsummary go test -json -race ./...   runs the command and exits with its status
//	go test -json ./... | testsummary       reads the events; exits 1 when a package failed
//
// It imports the standard library only.
package main
