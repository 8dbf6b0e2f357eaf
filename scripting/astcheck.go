package scripting

import (
	"math/big"
	"reflect"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
)

// findBigIntLiteral returns the position of the first BigInt literal (123n) in a parsed
// program. BigInt arithmetic runs in Go without any bound (1n << 10n**10n asks for a GiB in
// one step), so the sandbox refuses BigInt altogether: the global BigInt is deleted, and a
// BigInt literal, the only other way to make one, is refused here. goja's AST has no visitor,
// so this walks the tree by reflection; it runs once per Compile.
func findBigIntLiteral(prg *ast.Program) (file.Idx, bool) {
	bigIntType := reflect.TypeFor[*big.Int]()
	literalType := reflect.TypeFor[ast.NumberLiteral]()
	type node struct {
		t reflect.Type
		p uintptr
	}
	seen := make(map[node]bool)
	var walk func(v reflect.Value) (file.Idx, bool)
	walk = func(v reflect.Value) (file.Idx, bool) {
		switch v.Kind() {
		case reflect.Pointer:
			key := node{v.Type(), v.Pointer()}
			if v.IsNil() || seen[key] {
				return 0, false
			}
			seen[key] = true
			return walk(v.Elem())
		case reflect.Interface:
			if v.IsNil() {
				return 0, false
			}
			return walk(v.Elem())
		case reflect.Struct:
			if v.Type() == literalType {
				if val := v.FieldByName("Value"); val.Elem().IsValid() && val.Elem().Type() == bigIntType {
					return file.Idx(v.FieldByName("Idx").Int()), true
				}
				return 0, false
			}
			for i := 0; i < v.NumField(); i++ {
				if idx, ok := walk(v.Field(i)); ok {
					return idx, true
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				if idx, ok := walk(v.Index(i)); ok {
					return idx, true
				}
			}
		}
		return 0, false
	}
	return walk(reflect.ValueOf(prg))
}
