package runtime

import (
	"errors"
	"sort"

	"switchboard/packages/yamlwalk"
)

// Diagnostic codes of a runtime file. ExitCode maps them to the command line's exit codes.
const (
	// CodeInvalid: the file (or a value it references) breaks a rule. Exit 1.
	CodeInvalid = "runtime.invalid"
	// CodeUnreadable: the runtime file, or a file or folder it names (package root,
	// secrets root, jwksFile, trustedCaFile, listen.tls's certFile and keyFile), is missing or
	// cannot be read. Exit 3.
	CodeUnreadable = "runtime.unreadable"
	// CodeSecretUnreadable: a referenced secret is missing, unreadable or empty. Exit 3.
	CodeSecretUnreadable = "secret.unreadable"
	// CodeSecretInsecure: a secret file is a symbolic link, not a regular file, or readable by
	// others than its owner (mode other than 0600 or 0400). It is a refusal of bad input: exit 1.
	CodeSecretInsecure = "secret.insecure"
)

// Diagnostic is one problem found in a runtime file: the walker's diagnostic, which package
// problems are too, so that the command line prints and encodes them alike. Here Path is the
// runtime file (absolute), Line is 1-based (0 when unknown) and Member is the dotted member, for
// example providers.sms-gateway.authentication.tokenRef. Message never contains a value read
// from the file, the environment or a secret: it names the member instead. String renders the
// human form "error[CODE] PATH:LINE: MEMBER: MESSAGE".
type Diagnostic = yamlwalk.Diagnostic

// LoadError carries every problem Load or CheckPackage found, in file order.
type LoadError = yamlwalk.LoadError

// ExitCode returns the process exit code for err: 0 for nil; 3 when every diagnostic is
// environmental (runtime.unreadable, secret.unreadable); 1 otherwise. A refusal wins over an
// environmental problem, because the file must be fixed first and waiting for the environment
// would not help.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var le *LoadError
	if !errors.As(err, &le) || !le.Environmental() {
		return 1
	}
	return 3
}

// diagnostics collects problems for one runtime file.
type diagnostics struct {
	path string
	yamlwalk.Diagnostics
}

// add records one problem. Callers must never format a value into msg.
func (d *diagnostics) add(code string, line int, member, msg string, args ...any) {
	d.Add(code, d.path, line, member, msg, args...)
}

// err returns nil without diagnostics, else a *LoadError sorted by line (stable, so problems
// found on one line keep their order).
func (d *diagnostics) err() error {
	if len(d.List) == 0 {
		return nil
	}
	list := append([]Diagnostic(nil), d.List...)
	sort.SliceStable(list, func(i, j int) bool { return list[i].Line < list[j].Line })
	return &LoadError{Diagnostics: list}
}
