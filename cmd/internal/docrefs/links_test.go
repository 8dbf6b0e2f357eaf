package docrefs

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

var (
	// mdLink is a markdown link or image: [text](target) and ![alt](target).
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// docRef is a reference to a page of docs/ in any file: docs/api.md, optionally followed by
	// #anchor or by , "Heading" (the start of a heading of that page).
	docRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])(docs/[A-Za-z0-9_/.-]+\.md)(?:#([A-Za-z0-9_-]+)|,? "([^"]+)")?`)
	// heading is an ATX heading line.
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	// slugDrop are the characters GitHub leaves out of a heading's anchor.
	slugDrop = regexp.MustCompile(`[^\p{L}\p{N}\s_-]`)
)

// outline is what one markdown page offers to links: its headings' texts and anchors.
type outline struct {
	titles  []string // heading text without markdown marks
	anchors map[string]bool
}

// readOutline reads the headings of a markdown page outside fenced code blocks, with the
// anchors GitHub gives them (a repeated heading gets -1, -2, … appended).
func readOutline(text string) outline {
	o := outline{anchors: map[string]bool{}}
	seen := map[string]int{}
	for _, line := range prose(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		title := strings.NewReplacer("`", "", "*", "").Replace(m[1])
		o.titles = append(o.titles, title)
		slug := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(title), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			o.anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			o.anchors[slug] = true
		}
		seen[slug]++
	}
	return o
}

// hasTitle reports whether a heading of the page starts with title.
func (o outline) hasTitle(title string) bool {
	for _, t := range o.titles {
		if strings.HasPrefix(t, title) {
			return true
		}
	}
	return false
}

// prose returns the lines of a markdown page that are not inside fenced code blocks.
func prose(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

// outlines caches the outline of each page the checks read.
type outlines struct {
	r     *repo
	pages map[string]*outline
}

func (c *outlines) get(t *testing.T, rel string) (*outline, bool) {
	if o, ok := c.pages[rel]; ok {
		return o, o != nil
	}
	text, ok := c.r.text(t, rel)
	if !ok {
		c.pages[rel] = nil
		return nil, false
	}
	o := readOutline(text)
	c.pages[rel] = &o
	return &o, true
}

func TestLinksOfTheDocumentationResolve(t *testing.T) {
	t.Parallel()
	r := openRepo(t)
	cache := &outlines{r: r, pages: map[string]*outline{}}
	var broken []string
	for _, page := range r.pages() {
		text, ok := r.text(t, page)
		if !ok {
			continue
		}
		for _, line := range prose(text) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				rel := page
				if file != "" {
					rel = path.Clean(path.Join(path.Dir(page), file))
				}
				if _, err := os.Stat(filepath.Join(r.root, filepath.FromSlash(rel))); err != nil {
					broken = append(broken, page+": "+target+": no such file")
					continue
				}
				if anchor == "" || !strings.HasSuffix(rel, ".md") {
					continue
				}
				if o, ok := cache.get(t, rel); !ok || !o.anchors[anchor] {
					broken = append(broken, page+": "+target+": no such heading")
				}
			}
		}
	}
	sort.Strings(broken)
	if len(broken) > 0 {
		t.Fatalf("broken links:\n%s", strings.Join(broken, "\n"))
	}
}

func TestReferencesToDocsPagesResolve(t *testing.T) {
	t.Parallel()
	r := openRepo(t)
	cache := &outlines{r: r, pages: map[string]*outline{}}
	var broken []string
	for _, f := range r.files {
		text, ok := r.text(t, f)
		if !ok {
			continue
		}
		for i, line := range strings.Split(text, "\n") {
			for _, m := range docRef.FindAllStringSubmatch(line, -1) {
				where := f + ":" + strconv.Itoa(i+1) + ": " + strings.TrimSpace(m[0])
				o, ok := cache.get(t, m[1])
				switch {
				case !ok:
					broken = append(broken, where+": no such page")
				case m[2] != "" && !o.anchors[m[2]]:
					broken = append(broken, where+": no such heading")
				case m[3] != "" && !o.hasTitle(m[3]):
					broken = append(broken, where+": no heading starts so")
				}
			}
		}
	}
	if len(broken) > 0 {
		t.Fatalf("references to docs/ that lead nowhere:\n%s", strings.Join(broken, "\n"))
	}
}
