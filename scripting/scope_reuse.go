package scripting

import (
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// Running the top-level code again for every call (scope.go) costs about a microsecond per
// function it declares. Most adapters need none of it: their top-level code only declares
// functions and constant tables, and no function ever assigns to what it declared. For such a
// script one run per runtime serves every call, once everything that run built is frozen:
// the tables, the functions (and their prototype objects) and the scope function's
// `arguments`. Nothing a call can reach then outlives it unless it is frozen: the top-level
// bindings (never assigned), their values (frozen), the global object and the built-ins
// (locked down). Closures are the one thing freezing cannot reach, and this top-level code
// creates none but the ones over the top-level scope itself: it runs no function.
//
// reusableScope decides, conservatively, from the parse tree: every top-level statement
// declares functions, or variables whose initializers are data (pureData), and no assignment
// anywhere in the script targets a name declared at the top level (shadowing is ignored: a
// local variable with such a name also sends the script down the fresh-scope path). It
// returns the names the top-level code declares, whose values are then frozen.
func reusableScope(prg *ast.Program) (names []string, ok bool) {
	for _, st := range prg.Body {
		switch st := st.(type) {
		case *ast.FunctionDeclaration:
			if st.Function.Name == nil {
				return nil, false
			}
			names = append(names, st.Function.Name.Name.String())
		case *ast.VariableStatement:
			if names, ok = dataBindings(names, st.List); !ok {
				return nil, false
			}
		case *ast.LexicalDeclaration:
			if names, ok = dataBindings(names, st.List); !ok {
				return nil, false
			}
		case *ast.EmptyStatement:
		case *ast.ExpressionStatement: // a directive such as 'use strict'
			if _, ok := st.Expression.(*ast.StringLiteral); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	declared := make(map[string]bool, len(names))
	for _, n := range names {
		declared[n] = true
	}
	assigned := false
	inspectAST(prg, func(node any) bool {
		for _, target := range assignmentTargets(node) {
			if declared[target] {
				assigned = true
			}
		}
		return !assigned
	})
	return names, !assigned
}

// dataBindings appends the names of declarations that bind plain identifiers to data.
func dataBindings(names []string, list []*ast.Binding) ([]string, bool) {
	for _, b := range list {
		id, ok := b.Target.(*ast.Identifier)
		if !ok || b.Initializer != nil && !pureData(b.Initializer) {
			return nil, false
		}
		names = append(names, id.Name.String())
	}
	return names, true
}

// pureData reports whether evaluating e runs no script code and builds nothing but
// primitives, plain objects and arrays, and functions: literals (no regular expressions,
// whose compile method changes them even frozen), references, function expressions, and
// operators over primitive literals only (an operator over an object would call its
// valueOf).
func pureData(e ast.Expression) bool {
	switch e := e.(type) {
	case *ast.Identifier, *ast.FunctionLiteral, *ast.ArrowFunctionLiteral:
		return true
	case *ast.ArrayLiteral:
		for _, v := range e.Value {
			if v != nil && !pureData(v) {
				return false
			}
		}
		return true
	case *ast.ObjectLiteral:
		for _, prop := range e.Value {
			switch prop := prop.(type) {
			case *ast.PropertyKeyed:
				if prop.Computed && !primitiveData(prop.Key) || !pureData(prop.Value) {
					return false
				}
			case *ast.PropertyShort:
				if prop.Initializer != nil {
					return false
				}
			default: // a spread
				return false
			}
		}
		return true
	}
	return primitiveData(e)
}

// primitiveData reports whether e is a primitive literal, or operators over them.
func primitiveData(e ast.Expression) bool {
	switch e := e.(type) {
	case *ast.StringLiteral, *ast.NumberLiteral, *ast.BooleanLiteral, *ast.NullLiteral:
		return true
	case *ast.TemplateLiteral:
		for _, sub := range e.Expressions {
			if !primitiveData(sub) {
				return false
			}
		}
		return e.Tag == nil
	case *ast.UnaryExpression:
		switch e.Operator {
		case token.MINUS, token.PLUS, token.NOT, token.BITWISE_NOT, token.TYPEOF, token.VOID:
			return primitiveData(e.Operand)
		}
	case *ast.BinaryExpression:
		return e.Operator != token.IN && e.Operator != token.INSTANCEOF && primitiveData(e.Left) && primitiveData(e.Right)
	case *ast.ConditionalExpression:
		return primitiveData(e.Test) && primitiveData(e.Consequent) && primitiveData(e.Alternate)
	}
	return false
}

// assignmentTargets are the names node assigns to, if it is an assignment, an increment or
// a decrement, or a for-in or for-of over an existing binding.
func assignmentTargets(node any) []string {
	switch n := node.(type) {
	case *ast.AssignExpression:
		return patternNames(nil, n.Left)
	case *ast.UnaryExpression:
		if n.Operator == token.INCREMENT || n.Operator == token.DECREMENT {
			return patternNames(nil, n.Operand)
		}
	case *ast.ForIntoExpression:
		return patternNames(nil, n.Expression)
	}
	return nil
}

// patternNames appends the identifiers an assignment target binds: the identifier itself, or
// those inside an array or object pattern (member targets assign to no binding).
func patternNames(names []string, target ast.Expression) []string {
	switch t := target.(type) {
	case *ast.Identifier:
		names = append(names, t.Name.String())
	case *ast.AssignExpression: // a default inside a pattern
		names = patternNames(names, t.Left)
	case *ast.ArrayPattern:
		for _, el := range t.Elements {
			names = patternNames(names, el)
		}
		names = patternNames(names, t.Rest)
	case *ast.ObjectPattern:
		for _, prop := range t.Properties {
			switch prop := prop.(type) {
			case *ast.PropertyShort:
				names = append(names, prop.Name.Name.String())
			case *ast.PropertyKeyed:
				names = patternNames(names, prop.Value)
			}
		}
		names = patternNames(names, t.Rest)
	}
	return names
}

// freezeScope freezes everything reachable from the values the scope function returned in
// a reusable scope: its entry points, its arguments object and the top-level values. An
// object already frozen is not walked into: in this top-level code that is a built-in, which
// the lockdown froze with everything it reaches.
func (sb *sandbox) freezeScope(values []goja.Value) {
	vm := sb.vm
	isFrozen := vm.Get("Object").ToObject(vm).Get("isFrozen").Export().(native)
	sb.freezeReachable(values, func(o *goja.Object) bool {
		return isFrozen(goja.FunctionCall{Arguments: []goja.Value{o}}).ToBoolean()
	})
}
