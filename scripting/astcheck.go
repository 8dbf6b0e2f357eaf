package scripting

import (
	"math/big"
	"reflect"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
)

// inspectAST calls visit with every node of a parsed program (every pointer the tree holds),
// parents before children, until visit returns false. goja's AST has no visitor, so this
// walks the tree by reflection; it runs a few times per Compile.
func inspectAST(prg *ast.Program, visit func(node any) bool) {
	type key struct {
		t reflect.Type
		p uintptr
	}
	seen := make(map[key]bool)
	var walk func(v reflect.Value) bool
	walk = func(v reflect.Value) bool {
		switch v.Kind() {
		case reflect.Pointer:
			k := key{v.Type(), v.Pointer()}
			if v.IsNil() || seen[k] {
				return true
			}
			seen[k] = true
			return visit(v.Interface()) && walk(v.Elem())
		case reflect.Interface:
			return v.IsNil() || walk(v.Elem())
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if !walk(v.Field(i)) {
					return false
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				if !walk(v.Index(i)) {
					return false
				}
			}
		}
		return true
	}
	walk(reflect.ValueOf(prg))
}

// findBigIntLiteral returns the position of the first BigInt literal (123n) in a parsed
// program. BigInt arithmetic runs in Go without any bound (1n << 10n**10n asks for a GiB in
// one step), so the sandbox refuses BigInt altogether: the global BigInt is deleted, and a
// BigInt literal, the only other way to make one, is refused here.
func findBigIntLiteral(prg *ast.Program) (idx file.Idx, found bool) {
	inspectAST(prg, func(node any) bool {
		if n, ok := node.(*ast.NumberLiteral); ok {
			if _, ok := n.Value.(*big.Int); ok {
				idx, found = n.Idx, true
			}
		}
		return !found
	})
	return idx, found
}
