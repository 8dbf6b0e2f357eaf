package scripting

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// Calls are independent because every call gets a fresh scope: the script's code is compiled
// as the body of one function (the scope function), and each call first runs that function,
// which declares the script's top-level functions, variables and constants anew, then calls
// the entry point it returns. What one call does to its top-level bindings, to objects its
// top-level code built or to closures over them dies with the call. The only objects that
// outlive a call are the global object and the built-ins, which the lockdown freezes, so
// that a write to them throws a TypeError. A script whose top-level code only declares
// functions and data, and never assigns to them, runs it once per runtime instead, and what
// it built is frozen (scope_reuse.go).
//
// The scope function is built from the parsed script, not by pasting source text around it,
// so that no script can close the function early and every position in a stack trace is
// the position in the script's own file.

// scopeProgram compiles the script as a function expression whose body is the script's code
// followed by `return [E1, E2, …]`, where Ei is the function the script bound to the i-th
// declared entry point, or the typeof string of whatever else it bound; for a reusable scope
// (scope_reuse.go) the array goes on with the function's arguments object and the values of
// the top-level names. tree is the script as Compile parsed it, to check that appending the
// return changed nothing before it. Its errors are the script's: Compile refuses it.
func scopeProgram(name, source string, tree *ast.Program, declared, topLevel []string, reuse bool) (*goja.Program, error) {
	resolver := resolverSource(declared)
	if reuse {
		resolver = resolver[:len(resolver)-1] + "arguments," + strings.Join(topLevel, ",") + "]"
	}
	full, err := goja.Parse(name, source+"\n;"+resolver, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, fmt.Errorf("parsing the script with its entry points: %w", err)
	}
	n := len(full.Body)
	if n < len(tree.Body)+1 || len(full.DeclarationList) != len(tree.DeclarationList) {
		return nil, errScopeParse
	}
	for i, st := range tree.Body {
		if full.Body[i].Idx0() != st.Idx0() || full.Body[i].Idx1() != st.Idx1() {
			return nil, errScopeParse
		}
	}
	for _, st := range full.Body[len(tree.Body) : n-1] {
		if _, ok := st.(*ast.EmptyStatement); !ok {
			return nil, errScopeParse
		}
	}
	last, ok := full.Body[n-1].(*ast.ExpressionStatement)
	if !ok {
		return nil, errScopeParse
	}
	if _, ok := last.Expression.(*ast.ArrayLiteral); !ok {
		return nil, errScopeParse
	}
	body := append(full.Body[:n-1:n-1], &ast.ReturnStatement{Return: last.Idx0(), Argument: last.Expression})
	start := last.Idx0()
	if len(body) > 1 {
		start = body[0].Idx0()
	}
	fn := &ast.FunctionLiteral{
		Function:        start,
		ParameterList:   &ast.ParameterList{Opening: start, Closing: start},
		Body:            &ast.BlockStatement{LeftBrace: start, List: body, RightBrace: last.Idx1()},
		DeclarationList: full.DeclarationList,
	}
	wrapped := &ast.Program{Body: []ast.Statement{&ast.ExpressionStatement{Expression: fn}}, File: full.File}
	return goja.CompileAST(wrapped, true)
}

// errScopeParse refuses a script that parses differently once its entry points are appended.
var errScopeParse = errors.New("the script does not parse the same with its entry points appended")

// resolverSource is an array expression that answers, for each entry point, the function the
// script bound to the name, or the typeof string of what else it bound ("undefined" when
// nothing). It reads function declarations, var, let and const alike.
func resolverSource(entries []string) string {
	var b strings.Builder
	b.WriteString("[")
	for _, e := range entries {
		fmt.Fprintf(&b, "typeof %s === 'function' ? %s : typeof %s,", e, e, e)
	}
	b.WriteString("]")
	return b.String()
}
