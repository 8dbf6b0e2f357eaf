package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

func TestVersionOfBuildInformation(t *testing.T) {
	t.Parallel()
	vcs := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "switchboard", Version: "v0.0.0-20261203075307-7e58033c1a2b+dirty"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "7e58033c1a2b"},
			{Key: "vcs.time", Value: "2026-12-03T07:53:07Z"}, {Key: "vcs.modified", Value: "true"}}}
	bare := &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Path: "switchboard", Version: "(devel)"}}
	for _, c := range []struct {
		name    string
		stamped string
		bi      *debug.BuildInfo
		want    buildVersion
	}{
		{"linker stamp wins", "v1.2.0-3-g7e58033-dirty", vcs,
			buildVersion{Version: "v1.2.0-3-g7e58033-dirty", Revision: "7e58033c1a2b", Time: "2026-12-03T07:53:07Z", Modified: true, Go: "go1.26.1"}},
		{"module version without a stamp", "", vcs,
			buildVersion{Version: "v0.0.0-20261203075307-7e58033c1a2b+dirty", Revision: "7e58033c1a2b", Time: "2026-12-03T07:53:07Z", Modified: true, Go: "go1.26.1"}},
		{"no VCS information", "", bare, buildVersion{Version: "(devel)", Go: "go1.26.1"}},
		{"no build information", "", nil, buildVersion{Version: "(devel)", Go: runtime.Version()}},
		{"empty module version", "", &debug.BuildInfo{}, buildVersion{Version: "(devel)", Go: runtime.Version()}},
	} {
		if got := versionOf(c.stamped, c.bi); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestVersionCommand runs the test binary, built as a plain `go build` (no linker stamp), so its
// version is the build information's.
func TestVersionCommand(t *testing.T) {
	t.Parallel()
	out, errOut, code := cli(t, "version")
	if code != 0 || errOut != "" {
		t.Fatalf("version: exit %d, stderr %q", code, errOut)
	}
	lines := regexp.MustCompile(`^switchboard (\S+)\nrevision: (.+)\ntime:     (.+)\nmodified: (true|false|unknown)\ngo:       (\S+)\n$`).
		FindStringSubmatch(out)
	if lines == nil {
		t.Fatalf("version prints\n%s", out)
	}
	if lines[5] != runtime.Version() {
		t.Errorf("go %s, want %s", lines[5], runtime.Version())
	}
	if flag, _, code := cli(t, "--version"); code != 0 || flag != out {
		t.Errorf("--version: exit %d,\n%s\nwant what version prints", code, flag)
	}

	out, _, code = cli(t, "version", "-o", "json")
	var doc map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("version -o json: exit %d, %q", code, out)
	}
	for _, member := range []string{"version", "revision", "time", "modified", "go"} {
		if _, ok := doc[member]; !ok {
			t.Errorf("version -o json lacks %q: %s", member, out)
		}
	}
	if doc["ok"] != true || doc["version"] != lines[1] || doc["go"] != runtime.Version() {
		t.Errorf("version -o json %s does not match the human form %v", out, lines[1:])
	}
	if _, ok := doc["modified"].(bool); !ok {
		t.Errorf("modified is not a boolean: %s", out)
	}
	if rev, _ := doc["revision"].(string); (rev == "") != strings.HasPrefix(lines[2], "unknown") {
		t.Errorf("revision %q in JSON, %q for people", rev, lines[2])
	}
	if flag, _, _ := cli(t, "-o", "json", "--version"); flag != out {
		t.Errorf("-o json --version prints %q, want %q", flag, out)
	}
	if _, _, code := cli(t, "version", "extra"); code != exitUsage {
		t.Errorf("version extra: exit %d, want %d", code, exitUsage)
	}
}

// TestBuildInfoMetric: a served stack (the real binary's serve) answers which build it is on its
// metrics listener, with the labels `switchboard version` prints.
func TestBuildInfoMetric(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	pkg, layout, api := serveFixture(t, dir)
	session := devSession{API: api, Gateways: oneMockForAll(pkg, "http://127.0.0.1:9"), Clients: clientsOf(pkg)}
	if err := writeDevRuntime(layout, pkg, session); err != nil {
		t.Fatal(err)
	}
	rt, err := os.ReadFile(layout.runtimePath)
	if err != nil {
		t.Fatal(err)
	}
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	rtText := strings.Replace(string(rt), "metrics: 127.0.0.1:0", "metrics: "+metricsAddr, 1)
	if rtText == string(rt) {
		t.Fatal("could not set the metrics listener")
	}
	if err := os.WriteFile(layout.runtimePath, []byte(rtText), 0o600); err != nil {
		t.Fatal(err)
	}
	proc := &scaleInstance{tb: t, bin: binary, runtime: layout.runtimePath, api: api, logs: &syncBuffer{}}
	proc.start()
	t.Cleanup(proc.kill)
	proc.waitReady(60 * time.Second)

	resp, err := http.Get("http://" + metricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()

	out, _, _ := cli(t, "version", "-o", "json")
	var v buildVersion
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("version -o json: %v (%q)", err, out)
	}
	want := fmt.Sprintf("switchboard_build_info{goversion=%q,revision=%q,version=%q} 1\n", v.Go, v.Revision, v.Version)
	if !strings.Contains(string(body), want) {
		t.Fatalf("metrics lack %s", want)
	}
	if v.Go != runtime.Version() {
		t.Errorf("goversion %q, want %q", v.Go, runtime.Version())
	}
}
