package adaptertest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFailureShowsTheRootCauseFirst: a send that prepare refuses, and a later callback that
// differs too. The report starts with the cause, on its own line and naming the script's line
// and column, then the first event's sections in full, and lists each later difference on one
// line.
func TestFailureShowsTheRootCauseFirst(t *testing.T) {
	t.Parallel()
	dir := adapterDir(t, map[string]string{"delivered.txtar": inputsOnly})
	runDir(t, dir, true)
	path := filepath.Join(dir, "testdata", "delivered.txtar")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(good), `parts: {text: "hello"}`, `parts: {text: "boom"}`, 1)
	mustWrite(t, path, strings.Replace(bad, "report: delivered}", "report: sent}", 1))
	passed, failed, out := runDir(t, dir, false)
	if passed != 0 || failed != 1 {
		t.Fatalf("passed %d failed %d\n%s", passed, failed, out)
	}
	lines := strings.Split(out, "\n")
	if !strings.HasPrefix(lines[0], "FAIL    ") {
		t.Fatalf("first line %q", lines[0])
	}
	cause := lines[1]
	if !strings.HasPrefix(cause, "        cause: send1: permanent script.failed: prepare: ") ||
		!strings.Contains(cause, "boom") || !strings.Contains(cause, "adapter.js:3:") {
		t.Fatalf("cause line %q\n%s", cause, out)
	}
	if lines[2] != "        send1/outcome.yaml differs" {
		t.Fatalf("third line %q, want the first event's outcome\n%s", lines[2], out)
	}
	for _, want := range []string{"        also: callback1/receipts.yaml differs\n",
		"          --- want\n          class: accepted\n", "          +++ got\n          class: permanent\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "send1/request.http differs") > strings.Index(out, "also: callback1") {
		t.Errorf("a later event printed before the first one's sections:\n%s", out)
	}
}

// TestUnverifiedCallbackShowsWhy: the verifier's reason (logged by the provider, never answered)
// is the cause the runner shows.
func TestUnverifiedCallbackShowsWhy(t *testing.T) {
	t.Parallel()
	dir := adapterDir(t, map[string]string{"delivered.txtar": inputsOnly})
	runDir(t, dir, true)
	path := filepath.Join(dir, "testdata", "delivered.txtar")
	good, _ := os.ReadFile(path)
	mustWrite(t, path, strings.Replace(string(good), "Adaptertest-Sign: yes\n", "X-Signature: 0011\n", 1))
	_, _, out := runDir(t, dir, false)
	if !strings.Contains(out, "cause: callback1: the callback was not verified (the verifier's reason is logged only): callback unverified: signature mismatch") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestSetupErrorsListTheAllowedKeys(t *testing.T) {
	t.Parallel()
	text := strings.Replace(inputsOnly, "secret: test-secret\n", "secret: test-secret\nsecrets: [a]\n", 1)
	text = strings.Replace(text, "profile: {id: p,", "profile: {ident: p,", 1)
	dir := adapterDir(t, map[string]string{"bad.txtar": text})
	_, failed, out := runDir(t, dir, false)
	if failed != 1 || !strings.Contains(out, "unknown key ident (allowed: channel, id, maximumSegments, sender)") {
		t.Fatalf("message.yaml: %s", out)
	}
	if strings.Contains(out, "adaptertest.") || strings.Contains(out, "struct {") {
		t.Errorf("a Go type name shows:\n%s", out)
	}
	text = strings.Replace(inputsOnly, "secret: test-secret\n", "secret: test-secret\nsecrets: [a]\n", 1)
	dir = adapterDir(t, map[string]string{"bad.txtar": text})
	_, _, out = runDir(t, dir, false)
	if !strings.Contains(out, "setup.yaml: line 5: unknown key secrets (allowed: baseUrl, callbackUrl, env, idempotentSubmit, now, privateKey, publicKey, secret, verifier)") {
		t.Fatalf("setup.yaml: %s", out)
	}
}
