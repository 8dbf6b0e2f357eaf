package packages

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// quickstartLayout lists every file of the quickstart that belongs to the package layout.
func quickstartLayout() []string {
	return []string{
		"switchboard.yaml",
		"providers/sms-gateway/provider.yaml",
		"providers/sms-gateway/adapter.js",
		"providers/chat-gateway/provider.yaml",
		"providers/chat-gateway/adapter.js",
		"providers/fcm/provider.yaml",
		"providers/fcm/adapter.js",
		"providers/apns/provider.yaml",
		"providers/apns/adapter.js",
		"templates/appointment-reminder/1/template.yaml",
		"templates/appointment-reminder/1/schema.json",
		"templates/appointment-reminder/1/sample.json",
		"templates/appointment-reminder/1/en/subject.tmpl",
		"templates/appointment-reminder/1/en/text.tmpl",
		"templates/appointment-reminder/1/en/html.tmpl",
		"templates/appointment-reminder/1/fr/subject.tmpl",
		"templates/appointment-reminder/1/fr/text.tmpl",
		"templates/appointment-reminder/1/fr/html.tmpl",
		"templates/appointment-reminder-sms/1/template.yaml",
		"templates/appointment-reminder-sms/1/schema.json",
		"templates/appointment-reminder-sms/1/sample.json",
		"templates/appointment-reminder-sms/1/en/text.tmpl",
		"templates/case-update/1/template.yaml",
		"templates/case-update/1/schema.json",
		"templates/case-update/1/sample.json",
		"templates/case-update/1/en/body.tmpl",
		"templates/case-chat/1/template.yaml",
		"templates/case-chat/1/schema.json",
		"templates/case-chat/1/sample.json",
		"templates/case-chat/1/en/text.tmpl",
		"templates/case-chat/1/en/body.tmpl",
		"templates/case-push/1/template.yaml",
		"templates/case-push/1/schema.json",
		"templates/case-push/1/sample.json",
		"templates/case-push/1/en/title.tmpl",
		"templates/case-push/1/en/body.tmpl",
		"templates/case-push/1/en/data.tmpl",
	}
}

func TestDigestIsTheDocumentedListing(t *testing.T) {
	t.Parallel()
	paths := quickstartLayout()
	sort.Strings(paths)
	var listing strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(filepath.Join(quickstartDir, p))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&listing, "%s\t%s\t%d\n", p, hex.EncodeToString(sum[:]), len(data))
	}
	sum := sha256.Sum256([]byte(listing.String()))
	want := "sha256:" + hex.EncodeToString(sum[:])
	if got := mustLoad(t, quickstartDir).Digest; got != want {
		t.Fatalf("digest %s, want %s from the listing:\n%s", got, want, listing.String())
	}
}

func TestDigestStable(t *testing.T) {
	t.Parallel()
	a := mustLoad(t, quickstartDir).Digest
	b := mustLoad(t, quickstartDir).Digest
	c := mustLoad(t, copyQuickstart(t)).Digest // another folder, same files
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(a) {
		t.Fatalf("digest %q", a)
	}
	if a != b || a != c {
		t.Fatalf("digests differ: %s %s %s", a, b, c)
	}
}

func TestDigestChangesWithEveryPackageFile(t *testing.T) {
	t.Parallel()
	base := mustLoad(t, quickstartDir).Digest
	for _, rel := range quickstartLayout() {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			dir := copyQuickstart(t)
			var extra string
			switch filepath.Ext(rel) {
			case ".yaml":
				extra = "# changed\n"
			case ".js":
				extra = "// changed\n"
			case ".json":
				extra = " "
			case ".tmpl":
				extra = "{{/* changed */}}"
			}
			writeFile(t, dir, rel, readFile(t, dir, rel)+extra)
			if got := mustLoad(t, dir).Digest; got == base {
				t.Fatalf("digest unchanged after editing %s", rel)
			}
		})
	}
}

func TestDigestIgnoresFilesOutsideTheLayout(t *testing.T) {
	t.Parallel()
	base := mustLoad(t, quickstartDir).Digest
	dir := copyQuickstart(t)
	writeFile(t, dir, "README.md", "# notes\n")
	writeFile(t, dir, "runtime.yaml", readFile(t, dir, "runtime.yaml")+"# edited\n")
	writeFile(t, dir, ".switchboard/dev/session.json", "{}")
	writeFile(t, dir, "templates/README.md", "templates")
	writeFile(t, dir, "templates/case-update/1/notes.md", "notes")
	writeFile(t, dir, "templates/case-update/1/en/preview.txt", "preview")
	writeFile(t, dir, "providers/sms-gateway/testdata/accepted.txtar", "-- message --\n")
	writeFile(t, dir, "providers/README.md", "providers")
	if got := mustLoad(t, dir).Digest; got != base {
		t.Fatalf("digest changed by files outside the layout: %s != %s", got, base)
	}
}
