package packages

import (
	"path/filepath"
	"strings"
	"testing"
)

// brokenCase breaks one thing in a copy of the quickstart and names the diagnostic Load must
// report: its code, its path and, for line-oriented files, the line (the first line of the
// broken file containing lineText) and member.
type brokenCase struct {
	name     string
	brk      func(t *testing.T, dir string)
	code     string
	path     string
	lineText string
	member   string
}

const (
	manifestPath = "switchboard.yaml"
	emailDir     = "templates/appointment-reminder/1"
	smsDir       = "templates/appointment-reminder-sms/1"
	peerDir      = "templates/case-update/1"
	gatewayDir   = "providers/sms-gateway"
)

func brokenCases() []brokenCase { return append(brokenManifests(), brokenLayouts()...) }

func TestLoadRefusesBrokenPackages(t *testing.T) {
	t.Parallel()
	cases := brokenCases()
	if len(cases) < 30 {
		t.Fatalf("only %d broken packages", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := copyQuickstart(t)
			tc.brk(t, dir)
			le := loadError(t, dir)
			want := 0
			if tc.lineText != "" {
				want = lineOf(t, dir, tc.path, tc.lineText)
			}
			for _, d := range le.Diagnostics {
				if d.Code != tc.code || d.Path != tc.path {
					continue
				}
				if want != 0 && d.Line != want {
					continue
				}
				if tc.member != "" && d.Member != tc.member {
					continue
				}
				if d.Message == "" {
					t.Errorf("diagnostic without a message: %+v", d)
				}
				return
			}
			t.Errorf("no diagnostic {code %s, path %s, line %d, member %q}; got:\n%v", tc.code, tc.path, want, tc.member, le)
		})
	}
}

func TestLoadCollectsEveryError(t *testing.T) {
	t.Parallel()
	dir := copyQuickstart(t)
	replaceIn(t, dir, manifestPath, "defaultExpirySeconds: 86400", "defaultExpirySeconds: 30")
	replaceIn(t, dir, manifestPath, "provider: peers", "provider: pigeons")
	remove(t, dir, emailDir+"/fr/html.tmpl")
	writeFile(t, dir, smsDir+"/schema.json", `{"$ref": "https://schemas.example/x.json"}`)
	remove(t, dir, gatewayDir+"/provider.yaml")

	le := loadError(t, dir)
	want := map[string]string{
		manifestPath:                  "defaultExpirySeconds",
		emailDir + "/fr/html.tmpl":    "",
		smsDir + "/schema.json":       "",
		gatewayDir + "/provider.yaml": "",
	}
	for path, member := range want {
		found := false
		for _, d := range le.Diagnostics {
			if d.Path == path && (member == "" || strings.HasSuffix(d.Member, member)) {
				found = true
			}
		}
		if !found {
			t.Errorf("no diagnostic for %s %s in:\n%v", path, member, le)
		}
	}
	pigeons := false
	for _, d := range le.Diagnostics {
		pigeons = pigeons || strings.Contains(d.Message, "pigeons")
	}
	if !pigeons {
		t.Errorf("the unknown provider is not reported:\n%v", le)
	}
	if len(le.Diagnostics) < 5 {
		t.Errorf("%d diagnostics, want at least 5", len(le.Diagnostics))
	}
	if le.Environmental() {
		t.Errorf("a refused package reads as an environment problem")
	}
	if got := strings.Count(le.Error(), "\n") + 1; got != len(le.Diagnostics) {
		t.Errorf("Error() has %d lines for %d diagnostics", got, len(le.Diagnostics))
	}
}

func TestLoadMissingFolderIsUnreadable(t *testing.T) {
	t.Parallel()
	le := loadError(t, filepath.Join(t.TempDir(), "nowhere"))
	if !le.Environmental() || le.Diagnostics[0].Code != CodePackageUnreadable || le.Diagnostics[0].Path != "." {
		t.Fatalf("got %v", le)
	}
}

func TestDiagnosticString(t *testing.T) {
	t.Parallel()
	d := Diagnostic{Code: CodePackageInvalid, Path: "switchboard.yaml", Line: 12, Member: "kind", Message: `must be "Package"`}
	if got, want := d.String(), `error[package.invalid] switchboard.yaml:12: kind: must be "Package"`; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
}

// TestInboxProviders: a receiver's inboxProviders are kept as listed; without the member a
// receiver reads every provider (nil).
func TestInboxProviders(t *testing.T) {
	t.Parallel()
	dir := copyQuickstart(t)
	replaceIn(t, dir, manifestPath, "    clients: [inbox-reader]\n", "    clients: [inbox-reader]\n    inboxProviders: [sms-gateway]\n")
	pkg := mustLoad(t, dir)
	if got := pkg.AccessProfile("inbox-readers").InboxProviders; len(got) != 1 || got[0] != "sms-gateway" {
		t.Fatalf("inboxProviders = %v", got)
	}
	if got := mustLoad(t, quickstartDir).AccessProfile("inbox-readers").InboxProviders; got != nil {
		t.Fatalf("inboxProviders without the member = %v, want nil (every provider)", got)
	}
}
