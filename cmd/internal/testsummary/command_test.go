package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestMain lets the test binary stand in for go test: with TESTSUMMARY_REPLAY set it prints
// that recorded file on stdout, a line on stderr, and exits with TESTSUMMARY_EXIT.
func TestMain(m *testing.M) {
	if file := os.Getenv("TESTSUMMARY_REPLAY"); file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(99)
		}
		os.Stdout.Write(b)
		os.Stderr.WriteString("go: a line of the command's stderr\n")
		code := 0
		if os.Getenv("TESTSUMMARY_EXIT") == "1" {
			code = 1
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestCommandStatusAndStderrPassThrough: with a command, the summary reads its stdout, passes
// its stderr through, and exits with its status, whatever the events say.
func TestCommandStatusAndStderrPassThrough(t *testing.T) {
	for _, tc := range []struct {
		file, exit string
		want       int
	}{
		{"testdata/run.jsonl", "1", 1},
		{"testdata/pass.jsonl", "0", 0},
		{"testdata/pass.jsonl", "1", 1}, // go test failed outside the events (a bad flag)
	} {
		t.Run(tc.file+"/exit-"+tc.exit, func(t *testing.T) {
			t.Setenv("TESTSUMMARY_REPLAY", tc.file)
			t.Setenv("TESTSUMMARY_EXIT", tc.exit)
			var out, errs bytes.Buffer
			if got := run([]string{os.Args[0]}, strings.NewReader(""), &out, &errs); got != tc.want {
				t.Errorf("exit status %d, want %d; stderr: %s", got, tc.want, errs.String())
			}
			if errs.String() != "go: a line of the command's stderr\n" {
				t.Errorf("stderr %q", errs.String())
			}
			if !strings.Contains(out.String(), "ok  \tdemo/good\t") {
				t.Errorf("stdout lacks the summary:\n%s", out.String())
			}
		})
	}
}

func TestCommandThatCannotStart(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	if got := run([]string{"/nonexistent/go", "test"}, strings.NewReader(""), &out, &errs); got != 2 {
		t.Errorf("exit status %d, want 2", got)
	}
	if !strings.Contains(errs.String(), "testsummary: start /nonexistent/go:") {
		t.Errorf("stderr %q", errs.String())
	}
}
