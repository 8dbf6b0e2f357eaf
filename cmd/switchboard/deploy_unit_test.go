package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const unitFile = "../../deploy/switchboard.service"

// lookTool finds program on PATH for a test of deploy/. Without it the test skips, saying
// which Debian package brings it, unless the environment variable require is 1 (CI sets it),
// where it fails instead.
func lookTool(t *testing.T, program, debianPackage, require string) string {
	t.Helper()
	path, err := exec.LookPath(program)
	if err != nil {
		if os.Getenv(require) == "1" {
			t.Fatalf("%s is required (%s=1; Debian package %s) but not on PATH", program, require, debianPackage)
		}
		t.Skipf("%s not on PATH (Debian package %s)", program, debianPackage)
	}
	return path
}

// unitSettings reads a unit file's "Key=value" lines (comments and sections left out); a key
// given several times keeps each value.
func unitSettings(t *testing.T, text string) map[string][]string {
	t.Helper()
	out, err := parseUnit(text, nil)
	if err != nil {
		t.Fatalf("%s: %v", unitFile, err)
	}
	return out
}

// parseUnit adds the settings of a unit file or drop-in to into (a new map when nil), each
// value after those already there, as systemd reads a unit and then its drop-ins.
func parseUnit(text string, into map[string][]string) (map[string][]string, error) {
	if into == nil {
		into = map[string][]string{}
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' || line[0] == '[' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("not a setting: %q", line)
		}
		into[k] = append(into[k], v)
	}
	return into, nil
}

// The unit runs serve the way docs/operations.md ("Running under systemd") says: notify
// readiness, its own user, the database in the state folder, secrets as credentials.
func TestSystemdUnitSettings(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	s := unitSettings(t, string(raw))
	want := map[string]string{
		"Type": "notify", "DynamicUser": "yes", "StateDirectory": "switchboard", "Restart": "on-failure",
		"ExecReload": "/bin/kill -HUP $MAINPID", "NoNewPrivileges": "yes", "ProtectSystem": "strict",
		"PrivateTmp": "yes", "CapabilityBoundingSet": "", "MemoryDenyWriteExecute": "yes",
		"ExecStart": "/usr/local/bin/switchboard serve --config /etc/switchboard/runtime.yaml",
	}
	for k, v := range want {
		if got := s[k]; len(got) != 1 || got[0] != v {
			t.Errorf("%s: %s=%q, want %q", unitFile, k, got, v)
		}
	}
	if len(s["LoadCredential"]) == 0 {
		t.Errorf("%s: no LoadCredential: secrets must come as credentials", unitFile)
	}
}

// systemd itself reads the unit: `systemd-analyze verify` on a copy whose ExecStart is the
// binary under test (verify wants the program to exist), then the offline security review.
// verify exits 0 on unknown keys and bad values, only warning, so any output fails too.
func TestSystemdUnitVerifies(t *testing.T) {
	t.Parallel()
	analyze := lookTool(t, "systemd-analyze", "systemd", "SWITCHBOARD_REQUIRE_SYSTEMD_ANALYZE")
	raw, err := os.ReadFile(unitFile)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(raw), "ExecStart=/usr/local/bin/switchboard ", "ExecStart="+binary+" ", 1)
	if text == string(raw) {
		t.Fatalf("%s: no ExecStart=/usr/local/bin/switchboard to point at the test binary", unitFile)
	}
	path := filepath.Join(t.TempDir(), "switchboard.service")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	verify := exec.Command(analyze, "verify", "--man=no", path)
	verify.Stdout, verify.Stderr = &out, &out
	if err := verify.Run(); err != nil || out.Len() > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out.String())
	}
	// The review scores exposure from 0 to 100 (shown as 0.0 to 10.0); the unit scores 1.6.
	out.Reset()
	review := exec.Command(analyze, "security", "--offline=true", "--threshold=25", "--no-pager", path)
	review.Stdout, review.Stderr = &out, &out
	if err := review.Run(); err != nil {
		t.Fatalf("systemd-analyze security: %v (exposure above 2.5)\n%s", err, out.String())
	}
}
