package scripting

import (
	"strings"

	"github.com/dop251/goja"
)

// replace and replaceAll can multiply their input: 'x'.repeat(2**20).replaceAll('x',
// 'y'.repeat(2**20)) asks for a TiB in one uninterruptible call. The guards let the original
// run unchanged when a bound computed without running it fits under the cap. Otherwise, and
// always for a replacement function, the original runs with a budgeted replacement function
// instead (budgetedReplacer): it produces each match's replacement (the script's function's
// answer, or the template expanded exactly as goja would) and throws as soon as the result
// would pass the cap. One run either way: goja spends about a microsecond per match, so a
// second, measuring run would double the worst uninterruptible time.

// stringReplace is String.prototype.replace (all=false) and replaceAll (all=true).
func (sb *sandbox) stringReplace(orig native, all bool) native {
	what := "String.prototype.replace"
	if all {
		what += "All"
	}
	return func(call goja.FunctionCall) goja.Value {
		if isNullish(call.This) {
			return orig(call)
		}
		search, repl := call.Argument(0), call.Argument(1)
		if obj, ok := search.(*goja.Object); ok {
			if all && sb.isRegExp(obj) && !strings.Contains(obj.Get("flags").String(), "g") {
				sb.throwType("%s must be called with a global RegExp", what)
			}
			if method := obj.GetSymbol(goja.SymReplace); !isNullish(method) {
				fn, ok := goja.AssertFunction(method)
				if !ok {
					sb.throwType("%s: Symbol.replace is not a function", what)
				}
				return callJS(fn, search, call.This, repl)
			}
		}
		s := call.This.ToString()
		needle := search.ToString()
		sLen, nLen := strLen(s), strLen(needle)
		if fn, ok := goja.AssertFunction(repl); ok {
			return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{needle, sb.budgetedReplacer(what, sLen, fn, nil)}})
		}
		tmpl := repl.ToString()
		count := 1
		if all {
			if nLen == 0 {
				count = sLen + 1
			} else {
				count = strings.Count(s.String(), needle.String())
			}
		} else if nLen > 0 && !strings.Contains(s.String(), needle.String()) {
			count = 0
		}
		each, exact := templateBound(tmpl.String(), nLen, sLen)
		bound := float64(sLen) + float64(count)*(each-float64(nLen))
		if bound <= float64(sb.p.limits.StringBytes) {
			return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{needle, tmpl}})
		}
		if exact {
			sb.checkString(what, bound) // throws
		}
		return orig(goja.FunctionCall{This: s, Arguments: []goja.Value{needle, sb.budgetedReplacer(what, sLen, nil, tmpl)}})
	}
}

// regexpReplace is RegExp.prototype[Symbol.replace].
func (sb *sandbox) regexpReplace(orig native) native {
	const what = "RegExp.prototype[Symbol.replace]"
	return func(call goja.FunctionCall) goja.Value {
		rx, ok := call.This.(*goja.Object)
		if !ok {
			return orig(call) // throws the TypeError it would
		}
		s := call.Argument(0).ToString()
		sLen := strLen(s)
		var replacement goja.Value
		if fn, ok := goja.AssertFunction(call.Argument(1)); ok {
			replacement = sb.budgetedReplacer(what, sLen, fn, nil)
		} else {
			tmpl := call.Argument(1).ToString()
			replacement = tmpl
			if regexpReplaceBound(tmpl.String(), sLen) > float64(sb.p.limits.StringBytes) {
				replacement = sb.budgetedReplacer(what, sLen, nil, tmpl)
			}
		}
		return orig(goja.FunctionCall{This: rx, Arguments: []goja.Value{s, replacement}})
	}
}

// budgetedReplacer returns a replacement function that answers each match with fn's answer
// (when fn is set) or with tmpl expanded, and throws a RangeError as soon as the result
// built so far plus the rest of the input would exceed the cap. It receives what a
// replacement function receives: (matched, captures..., position, string[, groups]).
func (sb *sandbox) budgetedReplacer(what string, sLen int, fn goja.Callable, tmpl goja.Value) goja.Value {
	var out, lastEnd int
	return sb.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		args := call.Arguments
		var groups *goja.Object
		if n := len(args); n > 0 {
			if g, ok := args[n-1].(*goja.Object); ok {
				groups, args = g, args[:n-1]
			}
		}
		if len(args) < 3 {
			sb.throwType("%s: unexpected replacement arguments", what)
		}
		matched := args[0].ToString()
		position := int(args[len(args)-2].ToInteger())
		var r goja.Value
		if fn != nil {
			r = callJS(fn, goja.Undefined(), call.Arguments...).ToString()
		} else {
			r = substitute(args[len(args)-1].ToString(), position, matched, args[1:len(args)-2], groups, tmpl)
		}
		out += max(0, position-lastEnd) + strLen(r)
		lastEnd = max(lastEnd, position+strLen(matched))
		sb.checkString(what, float64(out+max(0, sLen-lastEnd)))
		return r
	})
}

// substitute is GetSubstitution as goja implements it (writeSubstitution in goja's
// builtin_regexp.go, mirrored rule for rule so that the budgeted path answers exactly what
// the original would): $$, $&, $`, $', $n and $nn (the longest number that names a group),
// and $<name> when the match has named groups.
func substitute(sv goja.Value, position int, matchedV goja.Value, captures []goja.Value, groups *goja.Object, tmplV goja.Value) goja.Value {
	s, matched, tmpl := sv.(goja.String), matchedV.(goja.String), tmplV.(goja.String)
	var buf goja.StringBuilder
	l, rl := s.Length(), tmpl.Length()
	position = min(max(position, 0), l)
	tailPos := position + matched.Length()
	numCaptures := len(captures) + 1
	capture := func(i int) goja.String {
		if i == 0 {
			return matched
		}
		if v := captures[i-1]; !isNullish(v) {
			return v.ToString().(goja.String)
		}
		return nil
	}
	for i := 0; i < rl; i++ {
		c := tmpl.CharAt(i)
		if c != '$' || i == rl-1 {
			buf.WriteRune(rune(c))
			continue
		}
		switch ch := tmpl.CharAt(i + 1); ch {
		case '$':
			buf.WriteRune('$')
		case '`':
			buf.WriteString(s.Substring(0, position))
		case '\'':
			if tailPos < l {
				buf.WriteString(s.Substring(tailPos, l))
			}
		case '&':
			buf.WriteString(matched)
		case '<':
			end := -1
			for j := i + 2; j < rl; j++ {
				if tmpl.CharAt(j) == '>' {
					end = j
					break
				}
			}
			if end >= 0 && groups != nil {
				if v := groups.Get(tmpl.Substring(i+2, end).String()); !isNullish(v) {
					buf.WriteString(v.ToString().(goja.String))
				}
				i = end
				continue
			}
			buf.WriteRune('$')
			buf.WriteRune('<')
		default:
			index, j := 0, i+1
			for lim := min(j+2, rl); j < lim; j++ {
				d := tmpl.CharAt(j)
				if d < '0' || d > '9' {
					break
				}
				m := index*10 + int(d-'0')
				if m >= numCaptures {
					break
				}
				index = m
			}
			if index > 0 {
				if c := capture(index); c != nil {
					buf.WriteString(c)
				}
				i = j - 1
				continue
			}
			buf.WriteRune('$')
			buf.WriteRune(rune(ch))
		}
		i++
	}
	return buf.String()
}

// templateBound bounds the expansion of tmpl for one match of a string search of nLen code
// units in an input of sLen code units. The bound is exact (literal text counted in bytes
// is exact for ASCII and an over-estimate otherwise) unless tmpl uses $` or $', which count
// as the whole input.
func templateBound(tmpl string, nLen, sLen int) (n float64, exact bool) {
	exact = true
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] == '$' && i+1 < len(tmpl) {
			switch tmpl[i+1] {
			case '$':
				n++
				i++
				continue
			case '&':
				n += float64(nLen)
				i++
				continue
			case '`', '\'':
				n += float64(sLen)
				exact = false
				i++
				continue
			}
		}
		n++
	}
	return n, exact
}

// regexpReplaceBound bounds the result of replacing every match of a RegExp in an input of
// sLen code units with tmpl, without running the RegExp. There are at most sLen+1 matches
// and they do not overlap, so over all matches $& and each $n or $<name> add at most sLen in
// total, while literal text is paid per match and $` and $' up to sLen per match. "$<...>"
// and "$n" count both as literal text and as a group, since which one they are depends on
// the RegExp.
func regexpReplaceBound(tmpl string, sLen int) float64 {
	var literal, groups, affixes float64
	for i := 0; i < len(tmpl); i++ {
		if tmpl[i] != '$' || i+1 == len(tmpl) {
			literal++
			continue
		}
		switch next := tmpl[i+1]; {
		case next == '$':
			literal++
			i++
		case next == '&':
			groups++
			i++
		case next == '`' || next == '\'':
			affixes++
			i++
		case isDigit(next) || next == '<':
			groups++
			literal++
		default:
			literal++
		}
	}
	n := float64(sLen)
	return n + (n+1)*literal + groups*n + affixes*n*(n+1)
}

// isRegExp is the specification's IsRegExp.
func (sb *sandbox) isRegExp(obj *goja.Object) bool {
	if m := obj.GetSymbol(goja.SymMatch); !isNullish(m) {
		return m.ToBoolean()
	}
	return obj.ClassName() == "RegExp"
}

// isDigit reports whether c is an ASCII digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
