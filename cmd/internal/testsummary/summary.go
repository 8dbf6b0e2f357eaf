package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// event holds the members of a go test -json event (cmd/test2json's TestEvent) that the
// summary reads. Build output carries ImportPath instead of Package.
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// chunk is one piece of output, with the test that printed it ("" for the package).
type chunk struct {
	test, text string
}

// pkgRun is the output of one package so far, kept until the package ends, as go test keeps it.
type pkgRun struct {
	out   []chunk
	ended map[string]string // test name to its result: pass, fail or skip
}

// skip is one skipped test and the reason it gave.
type skip struct {
	pkg, test, reason string
}

// summary turns go test -json events back into go test's own output and collects the skips.
type summary struct {
	w      io.Writer
	pkgs   map[string]*pkgRun
	order  []string // packages in the order they started, for the ones that never end
	skips  []skip
	failed bool
}

func newSummary(w io.Writer) *summary {
	return &summary{w: w, pkgs: map[string]*pkgRun{}}
}

// read feeds every line of r to the summary.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		s.feed(sc.Text())
	}
	return sc.Err()
}

// feed takes one line of go test -json. A line that is not an event is printed as it is.
func (s *summary) feed(line string) {
	var e event
	if err := json.Unmarshal([]byte(line), &e); err != nil || e.Action == "" {
		fmt.Fprintln(s.w, line)
		return
	}
	switch {
	case e.Action == "build-output":
		io.WriteString(s.w, e.Output)
	case e.Action == "build-fail":
	case e.Test == "":
		s.packageEvent(e)
	default:
		p := s.pkg(e.Package)
		switch e.Action {
		case "output":
			p.out = append(p.out, chunk{e.Test, e.Output})
		case "pass", "fail", "skip":
			p.ended[e.Test] = e.Action
			if e.Action == "skip" {
				s.skips = append(s.skips, skip{e.Package, e.Test, skipReason(p.output(e.Test))})
			}
		}
	}
}

func (s *summary) pkg(name string) *pkgRun {
	p, ok := s.pkgs[name]
	if !ok {
		p = &pkgRun{ended: map[string]string{}}
		s.pkgs[name] = p
		s.order = append(s.order, name)
	}
	return p
}

// packageEvent prints a package when it ends: its summary line when it passed (or had no
// tests), and when it failed everything go test would print: the package's own output and that
// of every test that failed or never finished (a panic, a timeout).
func (s *summary) packageEvent(e event) {
	p := s.pkg(e.Package)
	switch e.Action {
	case "output":
		p.out = append(p.out, chunk{"", e.Output})
	case "pass", "skip":
		for i := len(p.out) - 1; i >= 0; i-- {
			if p.out[i].test == "" {
				io.WriteString(s.w, p.out[i].text)
				break
			}
		}
		delete(s.pkgs, e.Package)
	case "fail":
		s.printFailed(p)
		delete(s.pkgs, e.Package)
	}
}

// printFailed prints a failed package as go test does without -json: the package's own output
// in place, and each failed or unfinished test as one block where it ended, its "--- FAIL" line
// first and its log after, so that the logs of parallel tests do not interleave. Tests that
// passed or skipped print nothing.
func (s *summary) printFailed(p *pkgRun) {
	s.failed = true
	last := map[string]int{}
	for i, c := range p.out {
		last[c.test] = i
	}
	for i, c := range p.out {
		switch {
		case c.test == "":
			io.WriteString(s.w, c.text)
		case last[c.test] == i && p.ended[c.test] == "fail":
			io.WriteString(s.w, testBlock(p.output(c.test), true))
		case last[c.test] == i && p.ended[c.test] == "":
			io.WriteString(s.w, testBlock(p.output(c.test), false))
		}
	}
}

// testBlock is a test's output without the framing of -json's verbose mode, its result line
// first; an unfinished test, which has none, keeps the line of its start, which names it.
func testBlock(out string, ended bool) string {
	var head, body strings.Builder
	for _, l := range strings.SplitAfter(out, "\n") {
		switch {
		case strings.HasPrefix(l, "--- "):
			head.WriteString(l)
		case strings.HasPrefix(l, "=== RUN") && !ended:
			head.WriteString(l)
		case strings.HasPrefix(l, "=== "):
		default:
			body.WriteString(l)
		}
	}
	if !ended && body.Len() == 0 {
		return "" // started, or paused, and never printed anything
	}
	return head.String() + body.String()
}

// finish prints the packages whose events stopped before their end (as failed: go test was cut
// off), the skipped tests grouped by reason, and go test's closing FAIL when something failed.
func (s *summary) finish() {
	for _, name := range s.order {
		if p, ok := s.pkgs[name]; ok {
			s.printFailed(p)
			fmt.Fprintf(s.w, "FAIL\t%s\t(no result: the run stopped)\n", name)
		}
	}
	s.pkgs = map[string]*pkgRun{}
	s.printSkips()
	if s.failed {
		fmt.Fprintln(s.w, "FAIL")
	}
}

func (s *summary) printSkips() {
	if len(s.skips) == 0 {
		return
	}
	byReason := map[string][]skip{}
	var reasons []string
	for _, k := range s.skips {
		if _, ok := byReason[k.reason]; !ok {
			reasons = append(reasons, k.reason)
		}
		byReason[k.reason] = append(byReason[k.reason], k)
	}
	sort.SliceStable(reasons, func(i, j int) bool {
		if a, b := len(byReason[reasons[i]]), len(byReason[reasons[j]]); a != b {
			return a > b
		}
		return reasons[i] < reasons[j]
	})
	fmt.Fprintf(s.w, "\n%s skipped, by what they need:\n", plural(len(s.skips), "test"))
	for _, r := range reasons {
		tests := byReason[r]
		sort.Slice(tests, func(i, j int) bool {
			if tests[i].pkg != tests[j].pkg {
				return tests[i].pkg < tests[j].pkg
			}
			return tests[i].test < tests[j].test
		})
		fmt.Fprintf(s.w, "  %s\n", r)
		for _, k := range tests {
			fmt.Fprintf(s.w, "    %s %s\n", k.pkg, k.test)
		}
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// output is everything test printed, in order.
func (p *pkgRun) output(test string) string {
	var b strings.Builder
	for _, c := range p.out {
		if c.test == test {
			b.WriteString(c.text)
		}
	}
	return b.String()
}

// logLine matches the start of a line of t.Log, t.Skip and the like: "    file_test.go:12: ".
var logLine = regexp.MustCompile(`^\s+[^\s:]+\.go:\d+: `)

// skipReason is the message of a skipped test's last log call (t.Skip's own, unless the test
// logged nothing with it), on one line, without its file and line.
func skipReason(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	start := -1
	for i, l := range lines {
		if logLine.MatchString(l) {
			start = i
		}
	}
	if start < 0 {
		return "(no reason given)"
	}
	parts := []string{strings.TrimSpace(logLine.ReplaceAllString(lines[start], ""))}
	for _, l := range lines[start+1:] {
		if strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "=== ") {
			break
		}
		parts = append(parts, strings.TrimSpace(l))
	}
	return strings.Join(parts, " ")
}
