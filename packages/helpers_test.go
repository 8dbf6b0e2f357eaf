package packages

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quickstartDir is the example package the tests start from.
const quickstartDir = "../examples/quickstart"

// copyQuickstart copies the quickstart package into a fresh temporary folder and returns it.
func copyQuickstart(t testing.TB) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "pkg")
	copyTree(t, quickstartDir, dst)
	return dst
}

func copyTree(t testing.TB, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// writeFile writes a file of the package, creating folders.
func writeFile(t testing.TB, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t testing.TB, dir, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// replaceIn replaces the first occurrence of old in a package file; old must be there.
func replaceIn(t testing.TB, dir, rel, old, new string) {
	t.Helper()
	s := readFile(t, dir, rel)
	if !strings.Contains(s, old) {
		t.Fatalf("%s does not contain %q", rel, old)
	}
	writeFile(t, dir, rel, strings.Replace(s, old, new, 1))
}

func remove(t testing.TB, dir, rel string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(rel))); err != nil {
		t.Fatal(err)
	}
}

// lineOf returns the 1-based line of the first line of a package file containing s.
func lineOf(t testing.TB, dir, rel, s string) int {
	t.Helper()
	for i, line := range strings.Split(readFile(t, dir, rel), "\n") {
		if strings.Contains(line, s) {
			return i + 1
		}
	}
	t.Fatalf("%s has no line containing %q", rel, s)
	return 0
}

// loadError loads dir, which must be refused, and returns the *LoadError.
func loadError(t testing.TB, dir string) *LoadError {
	t.Helper()
	pkg, err := Load(dir)
	if err == nil {
		t.Fatalf("Load accepted the package (digest %s)", pkg.Digest)
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load error is %T, want *LoadError: %v", err, err)
	}
	if len(le.Diagnostics) == 0 {
		t.Fatal("LoadError without diagnostics")
	}
	return le
}

// mustLoad loads a package that must be accepted.
func mustLoad(t testing.TB, dir string) *Package {
	t.Helper()
	pkg, err := Load(dir)
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	return pkg
}

// miniPackage writes a package holding one template (id "t", version "1") built from the
// given files (relative to the template folder) and loads it.
func miniPackage(t testing.TB, files map[string]string) *Template {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "mini")
	writeFile(t, dir, "switchboard.yaml", `apiVersion: switchboard/v1
kind: Package
templates: [{id: t, version: "1"}]
accessProfiles:
  - {id: ops, role: operator, clients: [ops], requestsPerMinute: 60, burst: 10}
`)
	for rel, content := range files {
		writeFile(t, dir, "templates/t/1/"+rel, content)
	}
	if _, ok := files["schema.json"]; !ok {
		writeFile(t, dir, "templates/t/1/schema.json", `{"type": "object"}`)
	}
	return mustLoad(t, dir).Template("t", "1")
}

// textTemplate is a one-locale (en) sms-free text template: channel peer with a text body
// would need JSON, so it uses an email template with a fixed subject.
func textTemplate(t testing.TB, text string) *Template {
	t.Helper()
	return miniPackage(t, map[string]string{
		"template.yaml":   "channel: email\nlocales: [en]\nparts: [subject, text]\n",
		"en/subject.tmpl": "s",
		"en/text.tmpl":    text,
	})
}

func mustDecode(t testing.TB, s string) any {
	t.Helper()
	v, err := DecodeData([]byte(s))
	if err != nil {
		t.Fatalf("DecodeData(%s): %v", s, err)
	}
	return v
}
