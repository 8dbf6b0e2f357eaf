package runtime

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// docs/runtime.md documents every member the decoder knows. The decoder's key lists are read
// from this package's source, so that a member added to any of them (the top-level keys, a
// *Keys variable, or the keys a child mapping is opened with) fails this test until the page
// describes it.

const runtimeDoc = "../../docs/runtime.md"

// keyList is one closed mapping of the runtime file as the decoder opens it: name is the
// member (or, for a list chosen by kind, the kind) and keys its allowed keys.
type keyList struct {
	where string
	name  string
	keys  []string
}

// listVars says how each package-level key list is documented: under a heading naming the
// member, or (byKind) one list per kind, each documented where the kind is.
var listVars = map[string]struct {
	name   string
	byKind bool
}{
	"topKeys":      {name: "Top-level members"},
	"webhookKeys":  {name: "webhooks"},
	"providerKeys": {byKind: true},
	"httpAuthKeys": {byKind: true},
	"verifierKeys": {byKind: true},
}

// decoderKeyLists reads every key list of the package's non-test sources.
func decoderKeyLists(t *testing.T) []keyList {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	var parsed []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					v := s.(*ast.ValueSpec)
					for i, n := range v.Names {
						if i < len(v.Values) {
							if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								consts[n.Name], _ = strconv.Unquote(lit.Value)
							}
						}
					}
				}
			}
		}
	}
	str := func(e ast.Expr) (string, bool) {
		switch x := e.(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(x.Value)
			return s, err == nil
		case *ast.Ident:
			s, ok := consts[x.Name]
			return s, ok
		}
		return "", false
	}
	strs := func(lit *ast.CompositeLit) []string {
		var out []string
		for _, e := range lit.Elts {
			if s, ok := str(e); ok {
				out = append(out, s)
			}
		}
		return out
	}
	var lists []keyList
	for _, f := range parsed {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				for i, n := range v.Names {
					if !strings.HasSuffix(n.Name, "Keys") || i >= len(v.Values) {
						continue
					}
					how, known := listVars[n.Name]
					lit, isLit := v.Values[i].(*ast.CompositeLit)
					if !known || !isLit {
						t.Fatalf("%s: key list %s is new to this test: add it to listVars", fset.Position(n.Pos()), n.Name)
					}
					if !how.byKind {
						lists = append(lists, keyList{n.Name, how.name, strs(lit)})
						continue
					}
					for _, el := range lit.Elts {
						kv := el.(*ast.KeyValueExpr)
						kind, ok := str(kv.Key)
						if !ok {
							t.Fatalf("%s: a kind of %s is not a string constant", fset.Position(kv.Pos()), n.Name)
						}
						var keys []string
						for _, k := range strs(kv.Value.(*ast.CompositeLit)) {
							if k != "kind" {
								keys = append(keys, k)
							}
						}
						lists = append(lists, keyList{n.Name + "[" + kind + "]", kind, keys})
					}
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "child" || len(call.Args) < 2 || call.Ellipsis.IsValid() {
				return true
			}
			var keys []string
			for _, a := range call.Args[1:] {
				k, ok := str(a)
				if !ok {
					return true
				}
				keys = append(keys, k)
			}
			name, ok := str(call.Args[0])
			if !ok {
				t.Fatalf("%s: a child mapping whose member is not a string", fset.Position(call.Pos()))
			}
			lists = append(lists, keyList{fset.Position(call.Pos()).String(), name, keys})
			return true
		})
	}
	return lists
}

// runtimePage is docs/runtime.md cut into sections: each heading with the lines under it up
// to the next heading of any level, and every table row of the page.
type runtimePage struct {
	sections []runtimeSection
	rows     [][]string
}

type runtimeSection struct {
	level   int
	heading string
	rows    [][]string
}

var backticked = regexp.MustCompile("`([^`]+)`")

func readRuntimePage(t *testing.T) runtimePage {
	t.Helper()
	raw, err := os.ReadFile(runtimeDoc)
	if err != nil {
		t.Fatal(err)
	}
	var p runtimePage
	for _, line := range strings.Split(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "#"):
			n := len(line) - len(strings.TrimLeft(line, "#"))
			p.sections = append(p.sections, runtimeSection{level: n, heading: strings.TrimSpace(line[n:])})
		case strings.HasPrefix(trimmed, "|") && !strings.HasPrefix(trimmed, "|---"):
			cells := strings.Split(strings.Trim(trimmed, "|"), "|")
			p.rows = append(p.rows, cells)
			if len(p.sections) > 0 {
				s := &p.sections[len(p.sections)-1]
				s.rows = append(s.rows, cells)
			}
		}
	}
	return p
}

// spans returns the code spans of a piece of markdown.
func spans(s string) map[string]bool {
	out := map[string]bool{}
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		out[m[1]] = true
	}
	return out
}

// documents reports which keys of l the page leaves out: the page documents l either under a
// heading that names l.name in a code span (or, for the top level, starts with it), whose
// table (the section and its sub-sections) names each key in its first column; or in one
// table row whose first cell is l.name and whose other cells name each key.
func (p runtimePage) missing(l keyList) []string {
	best := l.keys
	for i, s := range p.sections {
		if !spans(s.heading)[l.name] && !strings.HasPrefix(s.heading, l.name) {
			continue
		}
		first := map[string]bool{}
		for j := i; j < len(p.sections) && (j == i || p.sections[j].level > s.level); j++ {
			for _, r := range p.sections[j].rows {
				for k := range spans(r[0]) {
					first[k] = true
					for _, seg := range strings.Split(k, ".") {
						first[seg] = true // file.root documents file and root
					}
				}
			}
		}
		if m := absent(l.keys, first); len(m) < len(best) {
			best = m
		}
	}
	for _, r := range p.rows {
		if len(r) < 2 || strings.TrimSpace(r[0]) != "`"+l.name+"`" {
			continue
		}
		if m := absent(l.keys, spans(strings.Join(r[1:], "|"))); len(m) < len(best) {
			best = m
		}
	}
	return best
}

func absent(keys []string, have map[string]bool) []string {
	var out []string
	for _, k := range keys {
		if !have[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func TestRuntimeDocDescribesEveryMember(t *testing.T) {
	t.Parallel()
	lists := decoderKeyLists(t)
	if len(lists) < 10 {
		t.Fatalf("the test read only %d key lists from the decoder", len(lists))
	}
	page := readRuntimePage(t)
	for _, l := range lists {
		if m := page.missing(l); len(m) > 0 {
			t.Errorf("docs/runtime.md does not describe %v of %s (%s)", m, l.name, l.where)
		}
	}
}
