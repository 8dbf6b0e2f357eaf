package adaptertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/providers/httpgw"
)

// sendTimeout bounds one send of a case (the provider's own timeout applies first).
const sendTimeout = 30 * time.Second

// Run runs the golden cases of the adapter folder dir (provider.yaml, its script, optional
// runtime-snippet.yaml, testdata/*.txtar), one parallel subtest per case file named after it.
// A case that differs from its expectations fails with its root cause first, then each
// differing section; with update the expected sections are rewritten instead (and the subtest
// logs it). A folder that cannot be read or holds no case fails the test at once.
func Run(t *testing.T, dir string, update bool) {
	t.Helper()
	a, err := loadAdapter(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := a.cases()
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			t.Parallel()
			res := a.runFile(file, update)
			if res.Status == StatusFail {
				var b strings.Builder
				res.writeText(&b, "")
				t.Error(b.String())
			}
			if res.Status == StatusUpdated {
				t.Logf("updated %s", file)
			}
		})
	}
}

// RunDir runs golden cases for the command line and writes one block per case to w (Check and
// Report.WriteText), then a summary line. passed and failed count case files; err is Check's.
func RunDir(dir string, update bool, w io.Writer) (passed, failed int, err error) {
	rep, err := Check(dir, update)
	if err != nil {
		return 0, 0, err
	}
	rep.WriteText(w)
	return rep.Passed, rep.Failed, nil
}

// Check runs the golden cases of dir, one after another, and reports each. dir is an adapter
// folder (it holds provider.yaml), or a folder whose sub-folders are adapter folders (each one
// that holds provider.yaml is run, in name order). An adapter folder without testdata/ is
// skipped and listed in Report.Skipped.
//
// err is set when nothing could be run: dir or an adapter folder cannot be read (err wraps
// the file system error: errors.Is(err, fs.ErrNotExist)), its provider.yaml or
// runtime-snippet.yaml is invalid, or its testdata/ holds no *.txtar. A case that cannot be
// parsed or whose provider cannot be built is a failed case, not err.
func Check(dir string, update bool) (Report, error) {
	var rep Report
	dirs, err := adapterDirs(dir)
	if err != nil {
		return rep, err
	}
	for _, d := range dirs {
		a, err := loadAdapter(d)
		if err != nil {
			return rep, err
		}
		if info, err := os.Stat(filepath.Join(d, "testdata")); err != nil || !info.IsDir() {
			rep.Skipped = append(rep.Skipped, d)
			continue
		}
		files, err := a.cases()
		if err != nil {
			return rep, err
		}
		for _, file := range files {
			res := a.runFile(file, update)
			if res.Status == StatusFail {
				rep.Failed++
			} else {
				rep.Passed++
			}
			rep.Cases = append(rep.Cases, res)
		}
	}
	return rep, nil
}

// adapterDirs resolves Check's argument into adapter folders.
func adapterDirs(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "provider.yaml")); err == nil {
		return []string{dir}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("adapter test %s: %w", dir, err)
	}
	var dirs []string
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "provider.yaml")); e.IsDir() && err == nil {
			dirs = append(dirs, filepath.Join(dir, e.Name()))
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("adapter test %s: no provider.yaml here or in a sub-folder", dir)
	}
	sort.Strings(dirs)
	return dirs, nil
}

// runFile runs one case file, then compares or rewrites its expectations.
func (a *adapter) runFile(path string, update bool) CaseResult {
	res := CaseResult{File: path, Status: StatusOK}
	fail := func(err error) CaseResult {
		res.Status, res.Cause = StatusFail, err.Error()
		return res
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fail(err)
	}
	c, err := parseCase(path, data)
	if err != nil {
		return fail(err)
	}
	got, notes, err := a.execute(c)
	if err != nil {
		return fail(fmt.Errorf("%s: %w", path, err))
	}
	if update {
		out := c.format(got)
		if bytes.Equal(out, bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))) {
			return res
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			return fail(fmt.Errorf("update: %w", err))
		}
		res.Status = StatusUpdated
		return res
	}
	for _, name := range c.sectionOrder(got) {
		want, expected := c.want[name]
		produced, made := got[name]
		var d *SectionDiff
		switch {
		case !expected:
			d = &SectionDiff{Section: name, Problem: ProblemMissing, Got: produced}
		case !made:
			d = &SectionDiff{Section: name, Problem: ProblemUnexpected, Want: want}
		case !sameSection(name, want, produced):
			d = &SectionDiff{Section: name, Problem: ProblemDiffers, Want: normalize(want), Got: normalize(produced)}
		}
		if d == nil {
			continue
		}
		if res.Cause == "" && notes[name] != "" {
			res.Cause = eventOf(name) + ": " + notes[name]
		}
		res.Status = StatusFail
		res.Diffs = append(res.Diffs, *d)
	}
	return res
}

// execute plays a case's events against a fresh provider and gateway and renders every
// expected section. notes holds detail shown beside a differing section (reasons, errors).
func (a *adapter) execute(c *caseFile) (got, notes map[string]string, err error) {
	gw := newGateway()
	defer gw.Close()
	clock := &caseClock{now: c.setup.Now.UTC()}
	cfg, priv, err := a.config(c, gw.URL(), clock)
	if err != nil {
		return nil, nil, err
	}
	reasons := newReasonLog()
	cfg.Logger = reasons.logger()
	p, err := httpgw.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	defer p.Close()
	sign := signer{cfg: cfg.Verifier, priv: priv}
	led := newLedger()
	got, notes = map[string]string{}, map[string]string{}
	declared := a.declaredHeaders()
	for _, ev := range c.events {
		clock.advance(time.Second)
		if ev.kind == kindSend {
			answer, err := parseAnswer(ev.input)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", ev.inputName(), err)
			}
			gw.expect(answer)
			ctx, cancel := context.WithTimeout(context.Background(), sendTimeout)
			o := p.Send(ctx, c.outbound(ev.n))
			cancel()
			reqs := gw.received()
			var first *recorded
			if len(reqs) > 0 {
				first = &reqs[0]
			}
			got[ev.prefix()+"request.http"] = renderRequest(first, declared)
			if len(reqs) > 1 {
				got[ev.prefix()+"request.http"] += fmt.Sprintf("# and %d more requests for this one send\n", len(reqs)-1)
			}
			got[ev.prefix()+"outcome.yaml"] = renderOutcome(o)
			if o.Reason != "" {
				notes[ev.prefix()+"outcome.yaml"] = strings.TrimSpace(string(o.Class)+" "+o.Code) + ": " + o.Reason
			}
			led.recordOutcome(o)
			continue
		}
		res, note, err := a.callback(p, sign, ev, clock.Now(), led)
		if !res.verified && err == nil {
			note += ": " + reasons.take()
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", ev.inputName(), err)
		}
		got[ev.prefix()+"receipts.yaml"] = renderCallback(res)
		notes[ev.prefix()+"receipts.yaml"] = note
	}
	if c.hasCallbacks() {
		got["report.yaml"] = renderReport(led)
	}
	return got, notes, nil
}

// caseClock is the case's engine.Clock: it moves only when the runner says.
type caseClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now returns the case's current time.
func (c *caseClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *caseClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var _ engine.Clock = (*caseClock)(nil)
