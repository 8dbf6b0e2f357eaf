package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"switchboard/engine"
	"switchboard/packages"
	"switchboard/packages/yamlwalk"
)

// diagnostic is one line of a refusal: `error[CODE] PATH: MESSAGE` for people, one object in
// `diagnostics` for machines.
type diagnostic struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// cliError is a failure with its exit code and diagnostics.
type cliError struct {
	exit  int
	diags []diagnostic
	cause error
	// reported says the command already printed the failure in full (its -o json document):
	// report adds nothing, so that stdout holds one JSON document.
	reported bool
}

func (e *cliError) Error() string {
	parts := make([]string, 0, len(e.diags))
	for _, d := range e.diags {
		parts = append(parts, d.Code+" "+d.Path+": "+d.Message)
	}
	return strings.Join(parts, "; ")
}

func (e *cliError) Unwrap() error { return e.cause }

// refused is an exit-1 error with one diagnostic.
func refused(code, path, message string) error {
	return &cliError{exit: exitRefused, diags: []diagnostic{{Code: code, Path: path, Message: message}}}
}

// environment is an exit-3 error: a file, database or secret is unreachable.
func environment(code, path string, err error) error {
	return &cliError{exit: exitEnvironment, diags: []diagnostic{{Code: code, Path: path, Message: err.Error()}}, cause: err}
}

// usageError is an exit-2 error.
func usageError(err error) error {
	return &cliError{exit: exitUsage, diags: []diagnostic{{Code: "usage", Path: "", Message: err.Error()}}, cause: err}
}

// fromPackageDiagnostics converts package or runtime diagnostics.
func fromPackageDiagnostics(exit int, ds []packages.Diagnostic) error {
	out := make([]diagnostic, 0, len(ds))
	for _, d := range ds {
		msg := d.Message
		if d.Member != "" && !strings.Contains(msg, d.Member) {
			msg = d.Member + ": " + msg
		}
		out = append(out, diagnostic{Code: d.Code, Path: d.Path, Line: d.Line, Message: msg})
	}
	return &cliError{exit: exit, diags: out}
}

// classify turns any error into a cliError.
func classify(err error) *cliError {
	var ce *cliError
	if errors.As(err, &ce) {
		return ce
	}
	// Package and runtime file problems are one type: the closed-YAML walker's.
	var le *yamlwalk.LoadError
	if errors.As(err, &le) {
		exit := exitRefused
		if le.Environmental() {
			exit = exitEnvironment
		}
		errors.As(fromPackageDiagnostics(exit, le.Diagnostics), &ce)
		return ce
	}
	var coded interface{ Code() string }
	if errors.As(err, &coded) {
		return &cliError{exit: exitRefused, diags: []diagnostic{{Code: coded.Code(), Message: err.Error()}}, cause: err}
	}
	var p *engine.Problem
	if errors.As(err, &p) {
		return &cliError{exit: exitRefused, diags: []diagnostic{{Code: p.Code, Message: p.Detail}}, cause: err}
	}
	return &cliError{exit: exitEnvironment, diags: []diagnostic{{Code: "environment.error", Message: err.Error()}}, cause: err}
}

// report prints a failure in the chosen format and returns its exit code.
func (a *app) report(err error) int {
	ce := classify(err)
	if ce.reported && a.json() {
		return ce.exit
	}
	if a.json() {
		body, _ := json.Marshal(map[string]any{"ok": false, "diagnostics": ce.diags})
		fmt.Fprintln(a.stdout, string(body))
		return ce.exit
	}
	for _, d := range ce.diags {
		path := d.Path
		if d.Line > 0 {
			path = fmt.Sprintf("%s:%d", path, d.Line)
		}
		if path == "" {
			path = "-"
		}
		// A message may quote stored text (a journal record, an id the operator typed).
		fmt.Fprintf(a.stderr, "error[%s] %s: %s\n", termSafe(d.Code), termSafe(path), termSafe(d.Message))
	}
	return ce.exit
}

// printJSON writes one JSON object on stdout.
func (a *app) printJSON(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode output: %w", err)
	}
	_, err = fmt.Fprintln(a.stdout, string(body))
	return err
}
