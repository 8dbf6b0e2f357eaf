package docrefs

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// outside matches a citation of the product's working documents, which live outside the
// repository where no reader of it can open them: the specification, the design notes and the
// style notes, by name or by "section N", and any path into the shared folder beside the
// repository. The pattern is assembled from pieces so that this file does not match itself.
var outside = regexp.MustCompile(strings.Join([]string{
	`\.\./` + `shared`,
	`\b` + `SP` + `EC\b`,
	`\b` + `DES` + `IGN(\.md\b| ")`,
	`\b` + `STY` + `LE(\.md\b| ")`,
}, "|"))

func TestNoFileCitesDocumentsOutsideTheRepository(t *testing.T) {
	t.Parallel()
	r := openRepo(t)
	var found []string
	for _, f := range r.files {
		text, ok := r.text(t, f)
		if !ok {
			continue
		}
		for i, line := range strings.Split(text, "\n") {
			if outside.MatchString(line) {
				found = append(found, f+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
	}
	if len(found) > 0 {
		t.Fatalf("%d lines cite a document outside the repository; point at the page of docs/ that "+
			"holds the rule instead (write it there if it is missing), or drop the citation:\n%s",
			len(found), strings.Join(found, "\n"))
	}
}

func TestTheCitationPatternCatchesEveryForm(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		"// Exit codes of " + "SP" + "EC section 8.",
		"The contract is [the spec](../" + "shared/" + "SP" + "EC.md).",
		"// as " + "DES" + "IGN \"Claims and leases\" describes",
		"see " + "STY" + "LE.md",
		"(" + "SP" + "EC 3.2)",
	} {
		if !outside.MatchString(line) {
			t.Errorf("the pattern misses %q", line)
		}
	}
	for _, line := range []string{
		"spec := DefaultSandbox()",
		"// docs/api.md, \"Problem codes\"",
		"a design record (docs/design/001-event-outbox.md)",
	} {
		if outside.MatchString(line) {
			t.Errorf("the pattern matches %q", line)
		}
	}
}
