package importrules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
)

// Package is one package as `go list -json` describes it.
type Package struct {
	ImportPath   string
	Imports      []string
	TestImports  []string // of its in-package tests, which compile into the package
	XTestImports []string // of its external test package (package foo_test)
	Error        *struct{ Err string }
}

// Violation is one import the rules forbid.
type Violation struct {
	Package, Import string
	Why             string
}

func (v Violation) String() string { return v.Package + " imports " + v.Import + ": " + v.Why }

// List runs `go list` on patterns in the module at dir and returns its packages.
func List(dir string, patterns ...string) ([]Package, error) {
	args := append([]string{"list", "-e", "-json=ImportPath,Imports,TestImports,XTestImports,Error"}, patterns...)
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w: %s", dir, err, stderr.String())
	}
	var pkgs []Package
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p Package
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("decode go list: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// Check returns every import of pkgs that Rules and Exclusives forbid, sorted. A package's own
// imports and its in-package tests' follow its area's rule; an external test package is a
// client of the package, like cmd, and follows only the exclusives.
func Check(pkgs []Package) []Violation {
	leaf := map[string]bool{}
	for _, p := range pkgs {
		leaf[p.ImportPath] = allStandard(p.Imports)
	}
	var out []Violation
	for _, p := range pkgs {
		rel, ok := relative(p.ImportPath)
		if !ok {
			continue
		}
		rule, root, covered := ruleFor(rel)
		if !covered {
			out = append(out, Violation{p.ImportPath, "-", "no import rule covers this folder; add one to Rules"})
			continue
		}
		seen := map[string]bool{}
		for _, imp := range append(append([]string{}, p.Imports...), p.TestImports...) {
			if !seen[imp] {
				seen[imp] = true
				if why := rule.forbids(root, imp, leaf[imp]); why != "" {
					out = append(out, Violation{p.ImportPath, imp, why})
				}
			}
		}
		for _, imp := range p.XTestImports {
			if !seen[imp] {
				seen[imp] = true
				if why := exclusiveForbids(root, imp); why != "" {
					out = append(out, Violation{p.ImportPath + " (external test)", imp, why})
				}
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// ruleFor finds the rule that covers the module-relative package path rel, and the root of its
// area (for "providers/*", the provider's own folder).
func ruleFor(rel string) (Rule, string, bool) {
	var best Rule
	bestRoot, found := "", false
	for _, r := range Rules {
		root := r.Area
		if prefix, ok := strings.CutSuffix(r.Area, "/*"); ok {
			rest, under := strings.CutPrefix(rel, prefix+"/")
			if !under {
				continue
			}
			first, _, _ := strings.Cut(rest, "/")
			root = prefix + "/" + first
		} else if !within(rel, root) {
			continue
		}
		if !found || len(r.Area) > len(best.Area) {
			best, bestRoot, found = r, root, true
		}
	}
	return best, bestRoot, found
}

// forbids says why the area at root may not import imp ("" when it may). isLeaf tells whether
// imp is a module package that imports only the standard library.
func (r Rule) forbids(root, imp string, isLeaf bool) string {
	if rel, ok := relative(imp); ok {
		if within(rel, root) || isLeaf {
			return ""
		}
		for _, allowed := range r.Internal {
			if allowed == "..." || allowed == rel {
				return ""
			}
			if folder, ok := strings.CutSuffix(allowed, "/..."); ok && within(rel, folder) {
				return ""
			}
		}
		return fmt.Sprintf("the %s area may import %s of the module (and leaf packages)", r.Area, describe(r.Internal))
	}
	if standard(imp) {
		return ""
	}
	if why := exclusiveForbids(root, imp); why != "" {
		return why
	}
	if r.AnyExternal {
		return ""
	}
	for _, prefix := range r.External {
		if imp == prefix || strings.HasPrefix(imp, strings.TrimSuffix(prefix, "/")+"/") {
			return ""
		}
	}
	return fmt.Sprintf("the %s area may import only these third-party packages: %s", r.Area, describe(r.External))
}

// exclusiveForbids says why the area at root may not import the third-party package imp. The
// prefixes match as plain prefixes, so that "github.com/dop251/goja" also keeps goja_nodejs
// behind scripting.
func exclusiveForbids(root, imp string) string {
	for _, e := range Exclusives {
		if strings.HasPrefix(imp, e.Prefix) && !within(root, e.Area) {
			return "only " + e.Area + " may import " + strings.TrimSuffix(e.Prefix, "/")
		}
	}
	return ""
}

// relative is the module-relative path of a module package.
func relative(path string) (string, bool) {
	if path == Module {
		return "", true
	}
	return strings.CutPrefix(path, Module+"/")
}

// within reports whether the module-relative path rel is folder or lies under it.
func within(rel, folder string) bool { return rel == folder || strings.HasPrefix(rel, folder+"/") }

// standard reports whether an import path is of the standard library (its first element has no
// dot) or cgo's "C".
func standard(path string) bool {
	if _, ok := relative(path); ok {
		return false
	}
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func allStandard(imports []string) bool {
	for _, imp := range imports {
		if !standard(imp) {
			return false
		}
	}
	return true
}

func describe(list []string) string {
	if len(list) == 0 {
		return "nothing"
	}
	return strings.Join(list, ", ")
}
