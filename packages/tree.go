package packages

import (
	"strconv"
	"text/template/parse"
)

// Each parsed part is rewritten once at load, before html/template adds its escapers, so that
// the rules of docs/package.md, "Templates" hold however the template is written:
//
//  1. Every printing action ends with _emit (unless its last function always returns text: date,
//     number, upper, lower, json and the text builtins), which refuses null (a missing key is already an
//     error under missingkey=error), objects and lists instead of printing "<no value>" or Go
//     syntax. In html parts the html/template escaper still runs after _emit.
//
//  2. A field chain that is optional by its use is read through _optional, which yields null
//     for an absent key instead of failing. Optional uses are: an argument of default, not, and
//     or or; a field piped into default ({{.x | default "y"}}); and the whole condition of if or
//     with ({{if .x}}, {{with $v := .x}}). So {{default "x" .maybe}} renders "x" and
//     {{if .maybe}} is false when the data has no key "maybe", while {{.maybe}} alone is still
//     refused. The rewrite is purely syntactic (.a.b becomes _optional . "a" "b", $v.a becomes
//     _optional $v "a"), so it holds inside range and with, and rendering never copies or
//     changes the data.

// prepareTree rewrites a template's parse tree in place.
func prepareTree(t *parse.Tree) {
	if t != nil && t.Root != nil {
		prepareList(t.Root)
	}
}

func prepareList(l *parse.ListNode) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		prepareNode(n)
	}
}

func prepareNode(n parse.Node) {
	switch x := n.(type) {
	case *parse.ActionNode:
		preparePipe(x.Pipe)
		if len(x.Pipe.Decl) == 0 && !printsText(x.Pipe) {
			x.Pipe.Cmds = append(x.Pipe.Cmds, &parse.CommandNode{
				NodeType: parse.NodeCommand,
				Pos:      x.Pos,
				Args:     []parse.Node{parse.NewIdentifier(emitFunc).SetPos(x.Pos)},
			})
		}
	case *parse.IfNode:
		prepareBranch(&x.BranchNode, true)
	case *parse.WithNode:
		prepareBranch(&x.BranchNode, true)
	case *parse.RangeNode:
		prepareBranch(&x.BranchNode, false)
	case *parse.TemplateNode:
		preparePipe(x.Pipe)
	case *parse.ListNode:
		prepareList(x)
	}
}

func prepareBranch(b *parse.BranchNode, condition bool) {
	if condition && b.Pipe != nil && len(b.Pipe.Cmds) == 1 && len(b.Pipe.Cmds[0].Args) == 1 {
		if call := optionalCall(b.Pipe.Cmds[0].Args[0]); call != nil {
			b.Pipe.Cmds[0].Args = call
		}
	}
	preparePipe(b.Pipe)
	prepareList(b.List)
	prepareList(b.ElseList)
}

func preparePipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	for i, cmd := range p.Cmds {
		for j, arg := range cmd.Args {
			if sub, ok := arg.(*parse.PipeNode); ok {
				preparePipe(sub)
				continue
			}
			if j > 0 && tolerant(cmd) {
				if call := optionalCall(arg); call != nil {
					cmd.Args[j] = &parse.PipeNode{
						NodeType: parse.NodePipe,
						Pos:      arg.Position(),
						Cmds:     []*parse.CommandNode{{NodeType: parse.NodeCommand, Pos: arg.Position(), Args: call}},
					}
				}
			}
		}
		// {{.x | default "y"}}: the field piped into default is optional.
		if i+1 < len(p.Cmds) && isIdent(p.Cmds[i+1], "default") && len(cmd.Args) == 1 {
			if call := optionalCall(cmd.Args[0]); call != nil {
				cmd.Args = call
			}
		}
	}
}

// textFuncs always return a string (or fail), so what they print needs no _emit check.
var textFuncs = []string{"date", "number", "upper", "lower", "json", "print", "printf", "println",
	"html", "js", "urlquery", "len"}

// printsText reports whether a pipeline ends in a function that always returns text.
func printsText(p *parse.PipeNode) bool {
	last := p.Cmds[len(p.Cmds)-1]
	for _, name := range textFuncs {
		if isIdent(last, name) {
			return true
		}
	}
	return false
}

// tolerant reports whether a command's field arguments are optional reads.
func tolerant(cmd *parse.CommandNode) bool {
	return isIdent(cmd, "default") || isIdent(cmd, "not") || isIdent(cmd, "and") || isIdent(cmd, "or")
}

func isIdent(cmd *parse.CommandNode, name string) bool {
	if len(cmd.Args) == 0 {
		return false
	}
	id, ok := cmd.Args[0].(*parse.IdentifierNode)
	return ok && id.Ident == name
}

// optionalCall returns the arguments of a command "_optional RECEIVER "k1" "k2"…" reading the
// same chain as a field node, or nil when the node is not a field chain.
func optionalCall(n parse.Node) []parse.Node {
	var recv parse.Node
	var keys []string
	switch x := n.(type) {
	case *parse.FieldNode:
		recv = &parse.DotNode{NodeType: parse.NodeDot, Pos: x.Pos}
		keys = x.Ident
	case *parse.VariableNode:
		if len(x.Ident) < 2 {
			return nil
		}
		recv = &parse.VariableNode{NodeType: parse.NodeVariable, Pos: x.Pos, Ident: x.Ident[:1:1]}
		keys = x.Ident[1:]
	default:
		return nil
	}
	args := []parse.Node{parse.NewIdentifier(optionalFunc).SetPos(n.Position()), recv}
	for _, k := range keys {
		args = append(args, &parse.StringNode{NodeType: parse.NodeString, Pos: n.Position(), Quoted: strconv.Quote(k), Text: k})
	}
	return args
}
