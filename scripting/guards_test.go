package scripting

import (
	"strconv"
	"strings"
	"testing"
)

// TestReplaceSemanticsOnBothPaths runs the same replacements with the default cap, where the
// original built-ins do the work, and with a tiny cap, where most of them go through the
// budgeted replacer: the answers must be the same, and the ones a conforming engine gives.
func TestReplaceSemanticsOnBothPaths(t *testing.T) {
	t.Parallel()
	tests := []struct{ expr, want string }{
		{`'abc'.replace('b', '[$&]')`, "a[b]c"},
		{"'abc'.replace('b', \"$`|$'\")", "aa|cc"},
		{`'aXbXc'.replaceAll('X', '$$')`, "a$b$c"},
		{`'aXbXc'.replaceAll('X', '$1$<n>')`, "a$1$<n>b$1$<n>c"},
		{`'abc'.replace('z', 'y')`, "abc"},
		{`'abc'.replaceAll('', '-')`, "-a-b-c-"},
		{`'john smith'.replace(/(\w+)\s(\w+)/, '$2, $1')`, "smith, john"},
		{`'john smith'.replace(/(?<first>\w+)\s(?<last>\w+)/, '$<last> $<first>')`, "smith john"},
		{`'abc'.replace(/(?<x>b)/, '[$<y>]')`, "a[]c"},
		{`'abc'.replace(/b/, '$0$1$<x>')`, "a$0$1$<x>c"},
		{`'abc'.replace(/(b)/, '$01')`, "abc"},
		{`'abc'.replace(/(b)/, '$10')`, "ab0c"},
		{`'abc'.replace(/(b)|(z)/, '[$2]')`, "a[]c"},
		{`'x'.replace(/x/, '$')`, "$"},
		{`'aaa'.replace(/a/g, (m, i) => i)`, "012"},
		{`'aaa'.replaceAll('a', (m, i, s) => s.length + i)`, "345"},
		{"'abcd'.replace(/b|d/g, \"<$`>\")", "a<a>c<abc>"},
		{`(() => { const r = /a/y; r.lastIndex = 1; return 'aa'.replace(r, 'b') + r.lastIndex })()`, "ab2"},
		{`(() => { const r = /a/g; r.lastIndex = 1; return 'aa'.replace(r, 'b') + r.lastIndex })()`, "bb0"},
		{`'a-b'.replace({[Symbol.replace]: (s, r) => s + r}, '!')`, "a-b!"},
		{`'a1b2'.replace({toString() { return '1' }}, '_')`, "a_b2"},
	}
	src := "function f(i) {\n\tswitch (i) {\n"
	for i, tt := range tests {
		src += "\tcase " + strconv.Itoa(i) + ": return " + tt.expr + ";\n"
	}
	src += "\t}\n}"
	for _, stringBytes := range []int{0, 16} {
		p := newProgram(t, src, []string{"f"}, func(o *Options) { o.Limits.StringBytes = stringBytes })
		for i, tt := range tests {
			if got := mustCall(t, p, "f", i); got != jsonString(tt.want) {
				t.Errorf("StringBytes %d: %s = %s, want %q", stringBytes, tt.expr, got, tt.want)
			}
		}
	}
}

// TestCapsAllowWhatFits checks the caps at their edge: a result of exactly the limit passes.
func TestCapsAllowWhatFits(t *testing.T) {
	t.Parallel()
	src := `
function f(i) {
	switch (i) {
	case 0: return 'ab'.repeat(8).length;
	case 1: return 'x'.padStart(16, 'yz').length;
	case 2: return 'x'.repeat(8).concat('y'.repeat(8)).length;
	case 3: return ['abcd', 'efgh', 'ijklmn'].join('-').length;
	case 4: return 'abcd'.replaceAll('b', 'xxxxxxxxxxxxx').length;
	case 5: return 'abcd'.replace(/b/g, '$&$&$&$&$&$&$&$&$&$&$&$&$&').length;
	case 6: var a = []; a.length = 32; return a.fill(1).length;
	case 7: return [...Array(32).keys()].length;
	case 8: return Array.prototype.concat.call([1], Array(31)).length;
	case 9: return JSON.stringify('x'.repeat(14)).length;
	}
}`
	p := newProgram(t, src, []string{"f"}, func(o *Options) { o.Limits.StringBytes, o.Limits.ArrayLength = 16, 32 })
	for i, want := range []string{"16", "16", "16", "16", "16", "16", "32", "32", "32", "16"} {
		if got, err := call(t, p, "f", i); got != want || err != nil {
			t.Errorf("case %d = %s, %v; want %s", i, got, err, want)
		}
	}
}

// TestIteratorCapsEveryBuiltInIterator drives each capped iterator one step past a small
// ArrayLength: each must refuse, and each must allow exactly the limit.
func TestIteratorCapsEveryBuiltInIterator(t *testing.T) {
	t.Parallel()
	sources := map[string]string{
		"array":      `[...Array(n).keys()]`,
		"string":     `[...'x'.repeat(n)]`,
		"map":        `[...(() => { const m = new Map(); for (let i = 0; i < n; i++) m.set(i, i); return m })()]`,
		"set":        `[...(() => { const s = new Set(); for (let i = 0; i < n; i++) s.add(i); return s })()]`,
		"regexp all": `[...'x'.repeat(n).matchAll(/x/g)]`,
	}
	for name, expr := range sources {
		p := newProgram(t, "function f(n) { return "+expr+".length }", []string{"f"},
			func(o *Options) { o.Limits.ArrayLength = 32 })
		if got, err := call(t, p, "f", 32); got != "32" || err != nil {
			t.Errorf("%s of 32 = %s, %v; want 32", name, got, err)
		}
		if _, err := call(t, p, "f", 33); ClassOf(err) != ClassFailed || !strings.Contains(err.Error(), "iterator: more than 32 steps") {
			t.Errorf("%s of 33: %v; want the iterator cap", name, err)
		}
	}
}
