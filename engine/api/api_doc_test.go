package api

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"switchboard/engine"
)

// docs/api.md is the reader's reference of the API; /openapi.json is the machine's. These tests
// hold them to each other and to the code: every route the server registers is in the OpenAPI
// document, every path and method of the document is a row of the page's route table and the
// other way round, and every problem code the engine defines is a row of the page's problem
// table with the status the one table (problems) gives it.

const apiDoc = "../../docs/api.md"

// docSection returns the lines of the page from the heading that starts with title to the
// next heading of the same or a higher level.
func docSection(t *testing.T, page, title string) []string {
	t.Helper()
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	level := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(line, "#") {
			n := len(line) - len(strings.TrimLeft(line, "#"))
			if level > 0 && n <= level {
				break
			}
			if level == 0 && strings.HasPrefix(strings.TrimSpace(line[n:]), title) {
				level = n
				continue
			}
		}
		if level > 0 {
			out = append(out, line)
		}
	}
	if level == 0 {
		t.Fatalf("%s has no section %q", page, title)
	}
	return out
}

// tableRows returns the cells of every table row of lines, header and rule rows left out.
func tableRows(lines []string) [][]string {
	var rows [][]string
	for _, line := range lines {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| ---") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		rows = append(rows, cells)
	}
	return rows
}

// code is the text of a cell that is one code span, or "".
var codeSpan = regexp.MustCompile("^`([^`]+)`$")

func code(cell string) string {
	if m := codeSpan.FindStringSubmatch(cell); m != nil {
		return m[1]
	}
	return ""
}

// documentedRoutes are the "METHOD path" pairs of the page's route table.
func documentedRoutes(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, row := range tableRows(docSection(t, apiDoc, "Routes")) {
		if len(row) < 4 || code(row[0]) == "" || code(row[1]) == "" {
			continue
		}
		out[code(row[0])+" "+code(row[1])] = true
	}
	return out
}

// openAPIRoutes are the "METHOD path" pairs of the OpenAPI document.
func openAPIRoutes(t *testing.T) map[string]bool {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for path, ops := range doc.Paths {
		for method := range ops {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options":
				out[strings.ToUpper(method)+" "+path] = true
			}
		}
	}
	return out
}

// registeredRoutes are the "METHOD path" pairs routes.go hands to s.handle, read from its
// source: s.handle("/path", methods{http.MethodGet: …, …}). The console's pages are not API.
func registeredRoutes(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "routes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 2 {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); !ok || sel.Sel.Name != "handle" {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		ms, ok2 := call.Args[1].(*ast.CompositeLit)
		if !ok || !ok2 {
			t.Fatalf("routes.go: a handle call at %s is not handle(\"path\", methods{…})", fset.Position(call.Pos()))
		}
		path, _ := strconv.Unquote(lit.Value)
		if strings.HasPrefix(path, "/console/") {
			return true
		}
		for _, el := range ms.Elts {
			kv := el.(*ast.KeyValueExpr)
			method := strings.ToUpper(strings.TrimPrefix(kv.Key.(*ast.SelectorExpr).Sel.Name, "Method"))
			out[method+" "+path] = true
		}
		return true
	})
	if len(out) == 0 {
		t.Fatal("routes.go registers no route the test could read")
	}
	return out
}

// difference lists the keys of a missing from b, sorted.
func difference(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func TestAPIDocRoutesMatchOpenAPI(t *testing.T) {
	t.Parallel()
	doc, spec, served := documentedRoutes(t), openAPIRoutes(t), registeredRoutes(t)
	if d := difference(spec, doc); len(d) > 0 {
		t.Errorf("docs/api.md, \"Routes\" lacks routes of /openapi.json: %v", d)
	}
	if d := difference(doc, spec); len(d) > 0 {
		t.Errorf("docs/api.md, \"Routes\" lists routes /openapi.json lacks: %v", d)
	}
	if d := difference(served, spec); len(d) > 0 {
		t.Errorf("/openapi.json lacks routes the server registers: %v", d)
	}
	if d := difference(spec, served); len(d) > 0 {
		t.Errorf("/openapi.json has routes the server does not register: %v", d)
	}
}

// engineCodes are the problem codes engine/errors.go defines (its Code… constants).
func engineCodes(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../errors.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, name := range v.Names {
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && strings.HasPrefix(name.Name, "Code") {
					c, _ := strconv.Unquote(lit.Value)
					out[c] = true
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("engine/errors.go defines no Code constant the test could read")
	}
	return out
}

func TestAPIDocListsEveryProblemCode(t *testing.T) {
	t.Parallel()
	documented := map[string]string{}
	for _, row := range tableRows(docSection(t, apiDoc, "Problem codes")) {
		if len(row) >= 3 && code(row[0]) != "" {
			documented[code(row[0])] = row[1]
		}
	}
	for c := range engineCodes(t) {
		info, ok := problems[c]
		if !ok {
			t.Errorf("engine code %s has no row in the problems table", c)
			continue
		}
		switch status, ok := documented[c]; {
		case !ok:
			t.Errorf("docs/api.md, \"Problem codes\" lacks %s", c)
		case status != strconv.Itoa(info.status):
			t.Errorf("docs/api.md gives %s the status %s; the problems table gives %d", c, status, info.status)
		}
	}
	for c := range documented {
		if _, ok := problems[c]; !ok {
			t.Errorf("docs/api.md, \"Problem codes\" lists %s, which the problems table does not know", c)
		}
	}
}

// TestAPIDocPutsAMissingScopeUnder403: a valid token that lacks a scope its access profile
// requires is answered 403 operation.not-authorized (auth.Authorize; RFC 6750's
// insufficient_scope), so the problem table says so on that row and not under 401.
func TestAPIDocPutsAMissingScopeUnder403(t *testing.T) {
	t.Parallel()
	causes := map[string]string{}
	for _, row := range tableRows(docSection(t, apiDoc, "Problem codes")) {
		if len(row) >= 3 && code(row[0]) != "" {
			causes[code(row[0])] = row[2]
		}
	}
	if c := causes[engine.CodeAuthenticationRefused]; strings.Contains(c, "scope") {
		t.Errorf("docs/api.md lists a scope under %s (401): %q", engine.CodeAuthenticationRefused, c)
	}
	if c := causes[engine.CodeOperationNotAuthz]; !strings.Contains(c, "scope") {
		t.Errorf("docs/api.md does not list a missing scope under %s (403): %q", engine.CodeOperationNotAuthz, c)
	}
}
