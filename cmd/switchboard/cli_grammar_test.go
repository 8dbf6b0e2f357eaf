package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runLine runs one command line in this process, as main does, and returns stdout, stderr and
// the exit code.
func runLine(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb, func(string) string { return "" })
	return out.String(), errb.String(), code
}

// commandPaths lists every command of the tree as the words that call it (the root as none),
// with whether it is a group: it has subcommands and takes no words of its own.
func commandPaths(t *testing.T) (paths [][]string, group map[string]bool) {
	t.Helper()
	root := (&app{stdout: io.Discard, stderr: io.Discard, getenv: func(string) string { return "" }}).rootCommand()
	// dev takes a folder and has a subcommand (token): a mistyped subcommand reads as a folder
	// and fails as one (package.unreadable, exit 3, naming the word).
	takesWords := map[string]bool{"dev": true}
	group = map[string]bool{}
	var walk func(c *cobra.Command, words []string)
	walk = func(c *cobra.Command, words []string) {
		paths = append(paths, words)
		key := strings.Join(words, " ")
		if c.HasSubCommands() {
			group[key] = !takesWords[key]
			delete(takesWords, key)
		}
		for _, child := range c.Commands() {
			walk(child, append(append([]string(nil), words...), child.Name()))
		}
	}
	walk(root, nil)
	for key := range takesWords {
		t.Fatalf("%q is listed as a command with subcommands that takes words, and is not one", key)
	}
	if len(paths) < 30 {
		t.Fatalf("walked only %d commands", len(paths))
	}
	return paths, group
}

// wantUsage checks that a command line failed as a usage error naming want: one line on stderr
// for people; with -o json, the diagnostics document on stdout and nothing on stderr.
func wantUsage(t *testing.T, want string, args ...string) {
	t.Helper()
	out, errOut, code := runLine(args...)
	if code != exitUsage || out != "" || !strings.HasPrefix(errOut, "error[usage] -: ") ||
		strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, want) {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and error[usage] naming %q", args, code, out, errOut, want)
	}
	wantUsageJSON(t, want, append(args, "-o", "json")...)
}

// wantUsageJSON checks that a command line that asks for JSON failed as a usage error naming
// want: the diagnostics document on stdout and nothing on stderr.
func wantUsageJSON(t *testing.T, want string, args ...string) {
	t.Helper()
	out, errOut, code := runLine(args...)
	var doc struct {
		Diagnostics []diagnostic `json:"diagnostics"`
		OK          *bool        `json:"ok"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if code != exitUsage || errOut != "" || dec.Decode(&doc) != nil || dec.More() || doc.OK == nil || *doc.OK ||
		len(doc.Diagnostics) != 1 || doc.Diagnostics[0].Code != "usage" || doc.Diagnostics[0].Path != "" ||
		!strings.Contains(doc.Diagnostics[0].Message, want) {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one usage diagnostic naming %q", args, code, out, errOut, want)
	}
}

// TestEveryCommandRefusesWhatItDoesNotKnow walks the whole command tree: every command refuses
// an unknown flag, every group an unknown subcommand and being called without one, as usage errors
// (exit 2), reported as JSON with -o json wherever it stands; --help shows each one's help.
func TestEveryCommandRefusesWhatItDoesNotKnow(t *testing.T) {
	t.Parallel()
	paths, group := commandPaths(t)
	for _, words := range paths {
		key := strings.Join(words, " ")
		wantUsage(t, "unknown flag: --no-such-flag", append(words, "--no-such-flag")...)
		if out, errOut, code := runLine(append(words, "--help")...); code != exitOK || !strings.Contains(out, "Usage:") {
			t.Errorf("%q --help: exit %d, stdout %q, stderr %q", key, code, out, errOut)
		}
		if !group[key] {
			continue
		}
		wantUsage(t, `unknown command "bogus-sub" for "`+strings.Join(append([]string{"switchboard"}, words...), " ")+`"`,
			append(words, "bogus-sub")...)
		if key != "" {
			wantUsage(t, "give a subcommand: ", words...)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	wantUsage(t, `unknown command "bogus" for "switchboard"`, "bogus")
	wantUsageJSON(t, `unknown command "bogus" for "switchboard"`, "-o", "json", "bogus")
	wantUsage(t, `unknown command "tset" for "switchboard adapter"; did you mean "test"?`, "adapter", "tset", "examples/quickstart/providers/sms-gateway")
	wantUsage(t, `unknown command "tset" for "switchboard adapter"`, "help", "adapter", "tset")
	wantUsage(t, `unknown command "bogus" for "switchboard"`, "help", "bogus")
	wantUsage(t, "accepts 1 arg(s), received 0", "messages", "show")
	wantUsage(t, "give a subcommand: init, run or test (switchboard adapter --help describes them)", "adapter")
	wantUsage(t, `unknown command "bogus" for "switchboard"`, "--version", "bogus")
	wantUsageJSON(t, "unknown flag: --no-such-flag", "--output=json", "check", "--no-such-flag")
	wantUsage(t, `unknown command "x" for "switchboard completion bash"`, "completion", "bash", "x")
	// A bad --output value cannot choose JSON; the last -o counts, as for the flag itself.
	if out, errOut, code := runLine("check", "-o", "yaml"); code != exitUsage || out != "" ||
		errOut != "error[usage] -: --output must be human or json\n" {
		t.Errorf("-o yaml: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if out, _, code := runLine("-o", "yaml", "bogus", "-o", "json"); code != exitUsage || !strings.HasPrefix(out, `{"diagnostics":`) {
		t.Errorf("-o yaml bogus -o json: exit %d, stdout %q", code, out)
	}
	if out, errOut, code := runLine("-o", "json", "bogus", "-o", "human"); code != exitUsage || out != "" || errOut == "" {
		t.Errorf("-o json bogus -o human: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// Words after "--" are arguments, never the output flag.
	if out, errOut, code := runLine("bogus", "--", "-o", "json"); code != exitUsage || out != "" || errOut == "" {
		t.Errorf("bogus -- -o json: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The root bare prints its help; shell completion still reaches cobra's hidden command.
	if out, _, code := runLine(); code != exitOK || !strings.Contains(out, "Available Commands:") {
		t.Errorf("bare: exit %d, %q", code, out)
	}
	if out, _, code := runLine(cobra.ShellCompRequestCmd, "messages", "sh"); code != exitOK || !strings.HasPrefix(out, "show\t") {
		t.Errorf("completion of messages sh: exit %d, %q", code, out)
	}
}

func TestOutputFromArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "human"},
		{[]string{"bogus", "-o", "json"}, "json"},
		{[]string{"-ojson", "bogus"}, "json"},
		{[]string{"--output=json", "x"}, "json"},
		{[]string{"messages", "--status", "queued", "--output", "json", "--apply"}, "json"},
		{[]string{"--no-such-flag", "-o", "json"}, "json"},
		{[]string{"-x", "-h", "-o", "json"}, "json"},
		{[]string{"-o", "json", "-o", "human"}, "human"},
		{[]string{"bogus", "--", "-o", "json"}, "human"},
	} {
		if got := outputFromArgs(c.args); got != c.want {
			t.Errorf("%q: %q, want %q", c.args, got, c.want)
		}
	}
}
