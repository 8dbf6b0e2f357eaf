package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCheckQuickstart(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	out, errOut, code := cli(t, "check", "--package", dir)
	if code != 0 {
		t.Fatalf("check: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"ok: " + dir, "digest: sha256:", "template appointment-reminder 1 (email)", "sample en: renders", "sample fr: renders",
		"template appointment-reminder-sms 1 (sms)", "template case-update 1 (peer)",
		"access profile case-notices (sender)", "access profile operations (operator)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`sample en: \d+ segment\(s\), (gsm7|ucs2) \d+ units`).MatchString(out) {
		t.Errorf("check output lacks the SMS segment line:\n%s", out)
	}

	out, _, code = cli(t, "check", "--package", dir, "--output", "json")
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc["ok"] != true {
		t.Fatalf("check -o json: exit %d, %q", code, out)
	}
	if d, _ := doc["digest"].(string); !strings.HasPrefix(d, "sha256:") {
		t.Fatalf("digest %q", d)
	}
}

func TestCheckRefusalsAndExitCodes(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	manifest := filepath.Join(dir, "switchboard.yaml")
	b, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(manifest, append(b, []byte("surprise: true\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := cli(t, "check", "--package", dir)
	if code != 1 || !regexp.MustCompile(`error\[package\.invalid\] switchboard\.yaml:\d+: .*surprise`).MatchString(errOut) {
		t.Fatalf("unknown key: exit %d, stderr %q", code, errOut)
	}
	out, _, code := cli(t, "check", "--package", dir, "-o", "json")
	var doc struct {
		OK          bool `json:"ok"`
		Diagnostics []struct {
			Code, Path, Message string
			Line                int
		} `json:"diagnostics"`
	}
	if code != 1 || json.Unmarshal([]byte(out), &doc) != nil || doc.OK || len(doc.Diagnostics) == 0 {
		t.Fatalf("json refusal: exit %d, %q", code, out)
	}
	if d := doc.Diagnostics[0]; d.Code != "package.invalid" || d.Path != "switchboard.yaml" || d.Line == 0 {
		t.Fatalf("diagnostic %+v", d)
	}

	if _, _, code := cli(t, "check", "--package", filepath.Join(t.TempDir(), "missing")); code != 3 {
		t.Fatalf("missing package folder: exit %d, want 3", code)
	}
	if _, _, code := cli(t, "check", "--no-such-flag"); code != 2 {
		t.Fatalf("unknown flag: exit %d, want 2", code)
	}
	if _, _, code := cli(t, "preview", "--package", dir); code != 2 {
		t.Fatalf("preview without args: exit %d, want 2", code)
	}
}

func TestInitWritesACheckablePackage(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "starter")
	if _, errOut, code := cli(t, "init", dir); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "runtime.yaml")); err != nil {
		t.Fatalf("no runtime file: %v", err)
	}
	if out, errOut, code := cli(t, "check", "--package", dir); code != 0 || !strings.Contains(out, "ok: ") {
		t.Fatalf("check starter: exit %d\n%s%s", code, out, errOut)
	}
	_, errOut, code := cli(t, "init", dir)
	if code != 1 || !strings.Contains(errOut, "init.exists") {
		t.Fatalf("init on an existing folder: exit %d, %q", code, errOut)
	}
}

func TestPreviewRendersEveryLocale(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	sample := filepath.Join(dir, "templates", "appointment-reminder", "1", "sample.json")
	for _, loc := range []string{"en", "fr"} {
		out, errOut, code := cli(t, "preview", "--package", dir, "appointment-reminder", "1", "--locale", loc, "--data", sample)
		if code != 0 || !strings.Contains(out, "--- subject ---") || !strings.Contains(out, "--- html ---") {
			t.Fatalf("preview %s: exit %d\n%s%s", loc, code, out, errOut)
		}
	}
	_, errOut, code := cli(t, "preview", "--package", dir, "appointment-reminder", "1", "--locale", "de", "--data", sample)
	if code != 1 || !strings.Contains(errOut, "template.locale-unavailable") {
		t.Fatalf("undeclared locale: exit %d, %q", code, errOut)
	}
	out, _, code := cli(t, "preview", "--package", dir, "appointment-reminder-sms", "1", "--locale", "en",
		"--data", filepath.Join(dir, "templates", "appointment-reminder-sms", "1", "sample.json"), "-o", "json")
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || doc["sms"] == nil {
		t.Fatalf("sms preview json: exit %d %q", code, out)
	}
}
