package bench

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestBenchDocListsEveryMember: docs/benchmarks.md, "Figures", names every JSON member of a
// run's result, those of the embedded open-loop and events figures included.
func TestBenchDocListsEveryMember(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	start := strings.Index(doc, "\n## Figures\n")
	if start < 0 {
		t.Fatal("docs/benchmarks.md has no Figures section")
	}
	figures := doc[start:]
	if end := strings.Index(figures[1:], "\n## "); end >= 0 {
		figures = figures[:end+1]
	}
	var members func(reflect.Type) []string
	members = func(typ reflect.Type) []string {
		var out []string
		for f := range typ.Fields() {
			if f.Anonymous {
				out = append(out, members(f.Type)...)
				continue
			}
			out = append(out, strings.Split(f.Tag.Get("json"), ",")[0])
		}
		return out
	}
	for _, m := range members(reflect.TypeFor[Result]()) {
		if !strings.Contains(figures, "`"+m+"`") {
			t.Errorf("the Figures section of docs/benchmarks.md does not name the member %s", m)
		}
	}
}
