package yamlwalk

import (
	"fmt"
	"strconv"
	"strings"
)

// Diagnostic is one problem found in a file: a stable code, the file (a package-relative path
// with forward slashes, "." for a package's root, or a runtime file's absolute path), the
// 1-based line (0 when the problem has none), the member (a dotted path such as
// senderProfiles[0].retry.maximumAttempts, empty when there is none) and a message. Messages
// never hold secrets or values read from the environment.
type Diagnostic struct {
	Code    string `json:"code"`
	Path    string `json:"path"`
	Line    int    `json:"line,omitempty"`
	Member  string `json:"member,omitempty"`
	Message string `json:"message"`
}

// String formats the diagnostic as the command line prints it:
// "error[CODE] PATH[:LINE]: [MEMBER: ]MESSAGE".
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString("error[")
	b.WriteString(d.Code)
	b.WriteString("] ")
	b.WriteString(d.Path)
	if d.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(d.Line))
	}
	b.WriteString(": ")
	if d.Member != "" {
		b.WriteString(d.Member)
		b.WriteString(": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Environmental reports whether the diagnostic is a problem of the environment (a file or a
// secret that cannot be read) rather than of the input: its code ends in ".unreadable".
func (d Diagnostic) Environmental() bool { return strings.HasSuffix(d.Code, ".unreadable") }

// LoadError is a refused file or package: every problem found, not only the first.
type LoadError struct {
	Diagnostics []Diagnostic
}

// Error renders one diagnostic per line.
func (e *LoadError) Error() string {
	lines := make([]string, len(e.Diagnostics))
	for i, d := range e.Diagnostics {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Environmental reports whether every diagnostic is environmental: then waiting for the
// environment may help (the command line exits 3). A refusal wins, since the input must be
// fixed first (exit 1).
func (e *LoadError) Environmental() bool {
	for _, d := range e.Diagnostics {
		if !d.Environmental() {
			return false
		}
	}
	return len(e.Diagnostics) > 0
}

// Diagnostics collects problems in the order they are found.
type Diagnostics struct {
	List []Diagnostic
}

// Add records one problem; format and args make the message as fmt.Sprintf does (format alone
// is the message when there are no args).
func (d *Diagnostics) Add(code, path string, line int, member, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	d.List = append(d.List, Diagnostic{Code: code, Path: path, Line: line, Member: member, Message: msg})
}

// Empty reports whether no problem was recorded.
func (d *Diagnostics) Empty() bool { return len(d.List) == 0 }

// Err is nil without problems, else a *LoadError holding them.
func (d *Diagnostics) Err() error {
	if len(d.List) == 0 {
		return nil
	}
	return &LoadError{Diagnostics: append([]Diagnostic(nil), d.List...)}
}
