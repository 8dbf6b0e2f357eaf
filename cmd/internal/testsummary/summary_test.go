package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the summaries")

// TestSummaryOfARecordedRun feeds a recorded go test -json run (a passing package with chatter
// and two skips, one of a subtest, a package with a failed subtest and a skip, a build failure, a package with no
// test files, a panic and a timeout) and compares the output with testdata/run.golden.
func TestSummaryOfARecordedRun(t *testing.T) {
	t.Parallel()
	got, status := summarize(t, "run.jsonl")
	if status != 1 {
		t.Errorf("exit status %d, want 1: packages failed", status)
	}
	golden := filepath.Join("testdata", "run.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("summary differs from %s (go test -run %s -update rewrites it):\n%s", golden, t.Name(), got)
	}
}

// TestSummaryKeepsWhatGoTestPrints checks the parts of the summary a reader and a runner rely
// on, one by one, so that a wrong golden file cannot hide them.
func TestSummaryKeepsWhatGoTestPrints(t *testing.T) {
	t.Parallel()
	got, _ := summarize(t, "run.jsonl")
	for _, want := range []string{
		"ok  \tdemo/good\t",
		"FAIL\tdemo/bad\t",
		"FAIL\tdemo/broken [build failed]\n",
		"?   \tdemo/nofiles\t[no test files]\n",
		"broken/b_test.go:5:28: undefined: undefined\n",
		"--- FAIL: TestBroken/sub (0.00s)\n    bad_test.go:8: want 2, got 3\n",
		"panic: assignment to entry in nil map",
		"=== RUN   TestHangs\n    s_test.go:11: waiting for a reply that never comes\npanic: test timed out after 1s\n",
		"\n3 tests skipped, by what they need:\n",
		"  needs PostgreSQL: set DEMO_DB to a postgres:// URL\n    demo/good TestNeedsDatabase\n",
		// A skip message of two lines is one reason, without the log call's file and line.
		"  needs PostgreSQL: set DEMO_DB\n    demo/good TestTable/postgres\n",
		"  needs wrk on PATH\n    demo/bad TestSkipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	for _, unwanted := range []string{
		"chatter of a passing test", // passing tests print nothing, as without -json
		"bad_test.go:5: fine",
		"=== RUN   TestFine",
		"TestCalm", // paused when the package panicked, and silent
		"PASS\n",
	} {
		if strings.Contains(got, unwanted) {
			t.Errorf("summary has %q:\n%s", unwanted, got)
		}
	}
	if !strings.HasSuffix(got, "\nFAIL\n") {
		t.Errorf("summary does not end with go test's closing FAIL:\n%s", got)
	}
}

func TestSummaryOfAPassingRun(t *testing.T) {
	t.Parallel()
	got, status := summarize(t, "pass.jsonl")
	if status != 0 {
		t.Errorf("exit status %d, want 0", status)
	}
	for _, want := range []string{"ok  \tdemo/good\t", "?   \tdemo/nofiles\t[no test files]\n",
		"\n2 tests skipped, by what they need:\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "FAIL") {
		t.Errorf("a passing run's summary says FAIL:\n%s", got)
	}
}

// TestSummaryOfACutOffRun: events that stop before a package's end (go test killed) print that
// package's output as a failure.
func TestSummaryOfACutOffRun(t *testing.T) {
	t.Parallel()
	in := `{"Action":"start","Package":"demo/cut"}
{"Action":"run","Package":"demo/cut","Test":"TestLong"}
{"Action":"output","Package":"demo/cut","Test":"TestLong","Output":"=== RUN   TestLong\n"}
{"Action":"output","Package":"demo/cut","Test":"TestLong","Output":"    long_test.go:9: step 3 of 10\n"}
`
	var out bytes.Buffer
	if status := run(nil, strings.NewReader(in), &out, &out); status != 1 {
		t.Errorf("exit status %d, want 1", status)
	}
	want := "=== RUN   TestLong\n    long_test.go:9: step 3 of 10\nFAIL\tdemo/cut\t(no result: the run stopped)\nFAIL\n"
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// summarize runs the summary on a recorded file, as `go test -json | testsummary` does.
func summarize(t *testing.T, name string) (string, int) {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errs bytes.Buffer
	status := run(nil, f, &out, &errs)
	if errs.Len() > 0 {
		t.Errorf("stderr: %s", errs.String())
	}
	return out.String(), status
}
