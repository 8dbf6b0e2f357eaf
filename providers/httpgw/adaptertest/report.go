package adaptertest

import (
	"fmt"
	"io"
	"strings"
)

// Case statuses.
const (
	StatusOK      = "ok"
	StatusFail    = "fail"
	StatusUpdated = "updated"
)

// Problems of one expected section.
const (
	// ProblemDiffers: the section is expected and something else was produced.
	ProblemDiffers = "differs"
	// ProblemMissing: the case produced the section but does not expect it (run with update).
	ProblemMissing = "missing"
	// ProblemUnexpected: the case expects the section and nothing produced it.
	ProblemUnexpected = "unexpected"
)

// Report is what Check found in a folder.
type Report struct {
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	// Skipped lists the adapter folders without testdata/.
	Skipped []string     `json:"skipped"`
	Cases   []CaseResult `json:"cases"`
}

// CaseResult is what became of one case file.
type CaseResult struct {
	File   string `json:"file"`
	Status string `json:"status"`
	// Cause is the root cause when there is one: why the case could not run (a malformed
	// section, a provider the runner could not build), or the reason behind the first differing
	// event (a send's internal reason, a callback's error).
	Cause string `json:"cause,omitempty"`
	// Diffs are the differing sections in event order: the first event that differs first.
	Diffs []SectionDiff `json:"diffs,omitempty"`
}

// SectionDiff is one expected section that does not match.
type SectionDiff struct {
	Section string `json:"section"`
	Problem string `json:"problem"`
	Want    string `json:"want,omitempty"`
	Got     string `json:"got,omitempty"`
}

// WriteText writes the report for people: one block per case ("ok", "updated" or "FAIL"),
// the skipped folders, then "N passed, N failed" (and ", N skipped").
func (r Report) WriteText(w io.Writer) {
	for _, d := range r.Skipped {
		fmt.Fprintf(w, "skip    %s (no testdata/ folder)\n", d)
	}
	for _, c := range r.Cases {
		var b strings.Builder
		c.writeText(&b, "        ")
		io.WriteString(w, b.String())
	}
	fmt.Fprintf(w, "%d passed, %d failed", r.Passed, r.Failed)
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, ", %d skipped", len(r.Skipped))
	}
	fmt.Fprintln(w)
}

// writeText writes one case: its status line, then for a failure the cause on its own line,
// the sections of the first differing event in full, and each later differing section on one
// line (later differences usually follow from the first).
func (c CaseResult) writeText(b *strings.Builder, indent string) {
	switch c.Status {
	case StatusOK:
		fmt.Fprintf(b, "ok      %s\n", c.File)
		return
	case StatusUpdated:
		fmt.Fprintf(b, "updated %s\n", c.File)
		return
	}
	fmt.Fprintf(b, "FAIL    %s\n", c.File)
	if c.Cause != "" {
		for i, line := range strings.Split(c.Cause, "\n") {
			prefix := "cause: "
			if i > 0 {
				prefix = "       "
			}
			fmt.Fprintf(b, "%s%s%s\n", indent, prefix, line)
		}
	}
	first := ""
	for _, d := range c.Diffs {
		event := eventOf(d.Section)
		if first == "" {
			first = event
		}
		if event != first {
			fmt.Fprintf(b, "%salso: %s %s\n", indent, d.Section, d.Problem)
			continue
		}
		switch d.Problem {
		case ProblemMissing:
			fmt.Fprintf(b, "%s%s: missing (run with --update to write it); got:\n", indent, d.Section)
			writeIndented(b, indent+"  ", d.Got)
		case ProblemUnexpected:
			fmt.Fprintf(b, "%s%s: expected, but nothing produced it\n", indent, d.Section)
		default:
			fmt.Fprintf(b, "%s%s differs\n%s  --- want\n", indent, d.Section, indent)
			writeIndented(b, indent+"  ", d.Want)
			fmt.Fprintf(b, "%s  +++ got\n", indent)
			writeIndented(b, indent+"  ", d.Got)
		}
	}
}

// writeIndented writes text line by line with a prefix, ending with a newline.
func writeIndented(b *strings.Builder, prefix, text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(prefix + line + "\n")
	}
}

// eventOf names the event of a section ("send1" for "send1/outcome.yaml"; report.yaml is
// its own).
func eventOf(section string) string {
	event, _, found := strings.Cut(section, "/")
	if !found {
		return section
	}
	return event
}
