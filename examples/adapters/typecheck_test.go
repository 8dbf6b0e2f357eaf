package adapters_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// adapterScripts lists every bundled adapter and the adapter init templates.
func adapterScripts(t *testing.T) []string {
	t.Helper()
	var scripts []string
	for _, pattern := range []string{
		filepath.Join("*", "adapter.js"),
		filepath.Join("..", "quickstart", "providers", "*", "adapter.js"),
		filepath.Join("..", "..", "packages", "starter", "providers", "*", "adapter.js"),
		filepath.Join("..", "..", "providers", "httpgw", "adapterkit", "template", "*", "adapter.js"),
	} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, m...)
	}
	if len(scripts) < 9 {
		t.Fatalf("only %d adapter scripts found: %v", len(scripts), scripts)
	}
	return scripts
}

// requireTSC returns the path of the TypeScript compiler pinned in typecheck/. Without node or
// the compiler the test skips, saying what it needs, unless SWITCHBOARD_REQUIRE_TSC=1 (CI sets
// it), when it fails.
func requireTSC(t *testing.T) string {
	t.Helper()
	tsc := filepath.Join("typecheck", "node_modules", ".bin", "tsc")
	_, nodeErr := exec.LookPath("node")
	_, tscErr := os.Stat(tsc)
	if nodeErr != nil || tscErr != nil {
		msg := "needs the TypeScript compiler: node on PATH (apt-get install nodejs npm), and `npm ci` in examples/adapters/typecheck"
		if os.Getenv("SWITCHBOARD_REQUIRE_TSC") == "1" {
			t.Fatal(msg + "; SWITCHBOARD_REQUIRE_TSC=1 requires it")
		}
		t.Skip(msg + " (SWITCHBOARD_REQUIRE_TSC=1 makes this a failure)")
	}
	return tsc
}

// TestAdaptersTypeCheck keeps switchboard.d.ts true: every bundled adapter and every init
// template is checked against it by the TypeScript compiler pinned in typecheck/ (npm ci
// there installs it), one script at a time since each defines the same global functions.
func TestAdaptersTypeCheck(t *testing.T) {
	t.Parallel()
	tsc := requireTSC(t)
	decls := filepath.Join("..", "..", "providers", "httpgw", "adapterkit", "template", "switchboard.d.ts")
	for _, script := range adapterScripts(t) {
		// One at a time: each run is a whole compiler, and the machine is shared.
		t.Run(script, func(t *testing.T) {
			cmd := exec.Command(tsc, "--noEmit", "--allowJs", "--checkJs", "--strict", "false", "--lib", "es2020",
				"--target", "es2020", decls, script)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("tsc: %v\n%s", err, out)
			}
		})
	}
}

// TestTypeCheckFailsOnAWrongAdapter: the check is real: a script that misuses the API fails.
func TestTypeCheckFailsOnAWrongAdapter(t *testing.T) {
	t.Parallel()
	tsc := requireTSC(t)
	bad := filepath.Join(t.TempDir(), "adapter.js")
	src := "// @ts-check\n/** @param {Switchboard.Message} m @returns {Switchboard.PreparedRequest} */\n" +
		"function prepare(m) { return {target: m.recipients, bodyFormat: \"xml\"}; }\n" +
		"crypto.md5(\"x\");\n"
	if err := os.WriteFile(bad, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	decls := filepath.Join("..", "..", "providers", "httpgw", "adapterkit", "template", "switchboard.d.ts")
	out, err := exec.Command(tsc, "--noEmit", "--allowJs", "--checkJs", "--lib", "es2020", decls, bad).CombinedOutput()
	if err == nil {
		t.Fatalf("a wrong adapter type-checked:\n%s", out)
	}
	for _, want := range []string{"recipients", "xml", "md5"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("tsc output does not mention %q:\n%s", want, out)
		}
	}
}
