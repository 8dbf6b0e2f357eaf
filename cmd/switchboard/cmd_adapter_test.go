package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdapterInitRunAndTest drives the adapter tooling as an author would: init a chat adapter,
// run its tests, print the request prepare builds, then break it and read the failure.
func TestAdapterInitRunAndTest(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "team-chat")
	out, errOut, code := cli(t, "adapter", "init", dir, "--channel", "chat")
	if code != 0 || !strings.Contains(out, "switchboard.d.ts") {
		t.Fatalf("init: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := cli(t, "adapter", "init", filepath.Join(root, "x"), "--channel", "fax"); code != 1 {
		t.Errorf("init --channel fax: exit %d, want 1", code)
	}
	if _, _, code := cli(t, "adapter", "init", filepath.Join(root, "y")); code != 2 {
		t.Errorf("init without --channel: exit %d, want 2", code)
	}
	if out, errOut, code := cli(t, "adapter", "test", dir); code != 0 || !strings.Contains(out, "1 passed, 0 failed") {
		t.Fatalf("test: exit %d\n%s%s", code, out, errOut)
	}

	msg := filepath.Join(root, "message.yaml")
	if err := os.WriteFile(msg, []byte("messageId: m-1\nrecipient: C0123ABCD\nparts: {text: \"hello\"}\nprofile: {id: team-chat, channel: chat}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = cli(t, "adapter", "run", dir, "--message", msg)
	if code != 0 || !strings.HasPrefix(out, "POST https://gateway.example/api/chat.postMessage\n") ||
		!strings.Contains(out, "content-type: application/json\n") || !strings.Contains(out, `"channel": "C0123ABCD"`) ||
		!strings.Contains(errOut, "not sent") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	out, _, code = cli(t, "adapter", "run", dir, "--message", msg, "-o", "json")
	var req struct {
		OK                bool
		Method, URL, Body string
		Headers           map[string]string
	}
	if code != 0 || json.Unmarshal([]byte(out), &req) != nil || !req.OK || req.Method != "POST" ||
		req.Headers["content-type"] != "application/json" || !strings.Contains(req.Body, `"text":"hello"`) {
		t.Fatalf("run -o json: exit %d, %s", code, out)
	}
	if _, _, code := cli(t, "adapter", "run", dir); code != 2 {
		t.Errorf("run without --message: exit %d, want 2", code)
	}

	// A throw in prepare: run refuses with the script's code and names the line.
	script := filepath.Join(dir, "adapter.js")
	src, _ := os.ReadFile(script)
	broken := strings.Replace(string(src), "function prepare(message, profile) {\n", "function prepare(message, profile) {\n  throw new Error(\"not yet\");\n", 1)
	if err := os.WriteFile(script, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = cli(t, "adapter", "run", dir, "--message", msg)
	if code != 1 || !strings.Contains(errOut, "error[script.failed]") || !strings.Contains(errOut, "adapter.js:") || !strings.Contains(errOut, "not yet") {
		t.Fatalf("run of a throwing prepare: exit %d, %q", code, errOut)
	}
	out, _, code = cli(t, "adapter", "test", dir, "-o", "json")
	var rep struct {
		OK     bool
		Failed int
		Cases  []struct {
			Status, Cause string
			Diffs         []struct{ Section, Problem string }
		}
	}
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.OK || rep.Failed != 1 || len(rep.Cases) != 1 {
		t.Fatalf("test -o json: exit %d, %s", code, out)
	}
	c := rep.Cases[0]
	if c.Status != "fail" || !strings.Contains(c.Cause, "send1: permanent script.failed") || !strings.Contains(c.Cause, "adapter.js:") ||
		len(c.Diffs) == 0 || c.Diffs[0].Section != "send1/outcome.yaml" {
		t.Fatalf("case %+v", c)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("stdout holds more than one JSON document:\n%s", out)
	}
	out, _, code = cli(t, "adapter", "test", dir)
	if code != 1 || !strings.Contains(out, "        cause: send1: permanent script.failed") {
		t.Fatalf("test: exit %d\n%s", code, out)
	}

	// A folder of adapters skips the ones without testdata/, and says so.
	if err := os.MkdirAll(filepath.Join(root, "bare"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"adapter.js", "provider.yaml"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if err := os.WriteFile(filepath.Join(root, "bare", f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, _, _ = cli(t, "adapter", "test", root)
	if !strings.Contains(out, "skip    "+filepath.Join(root, "bare")+" (no testdata/ folder)") || !strings.Contains(out, "1 skipped") {
		t.Fatalf("a folder without testdata/:\n%s", out)
	}
}
