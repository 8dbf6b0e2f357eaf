package scripting

import (
	"context"
	"testing"
	"time"
)

func TestSmoke(t *testing.T) {
	start := time.Now()
	p, err := Compile("a.js", `function f(x) { return {x: x, s: [1,2,'a'].join('-'), t: typeof Function, o: String({}) }; }`, []string{"f"}, nil, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("compile", time.Since(start))
	start = time.Now()
	out, err := p.Call(context.Background(), "f", map[string]any{"a": 1})
	t.Log(string(out), err, time.Since(start))
	for _, src := range []string{
		`eval('1')`, `(function(){}).constructor('return 1')()`, `Function('return 1')`,
		`Object.getPrototypeOf(function*(){}).constructor('yield 1')`, `(async function(){}).constructor('return 1')`,
		`JSON.stringify = 1`, `Object.prototype.x = 1`, `var o = {}; o.toString = function(){return 'mine'}; String(o)`,
		`class E extends Error { constructor(m){ super(m); this.name = 'E' } }; String(new E('hi'))`,
		`'x'.repeat(2**30)`, `'x'.padStart(2**30)`, `new Array(1e9).fill(0)`, `var a=[]; a.length=1e9; a.length`,
		`var a=[]; a[4e9]=1; [...a]`, `Math.max.apply(null, {length: 1e9})`, `function f(){return f()} f()`,
		`for(;;){}`, `try { for(;;){} } catch(e) {}`, `JSON.parse('['.repeat(1000) + ']'.repeat(1000))`,
		`var a=[]; for(var i=0;i<200;i++) a=[a]; JSON.stringify(a).length`, `var a=[]; for(var i=0;i<2000;i++) a=[a]; String(a).length`,
		`'x'.repeat(1<<20).replaceAll('x', 'yy')`, `'x'.repeat(1000).replace(/x/g, '$&$&')`, `'x'.repeat(1<<19).replace(/x/g, '$&$&').length`,
		`Object.keys(globalThis).join()`, `Object.getOwnPropertyNames(globalThis).join()`, `typeof Proxy + typeof BigInt + typeof Uint8Array`,
		`encoding.base64.encode('hello') + ' ' + crypto.sha256('abc') + ' ' + encoding.hex.decode('6869')`,
		`console.log('hi', {a:1}); 1`, `[1,2,3].map(x=>x*2).filter(x=>x>2).join()`, `new Date(0).toISOString()`, `/a(b)/.exec('ab')[1]`,
		`[...[1,2,3]].length`, `let m = new Map([[1,2]]); [...m.keys()].join()`, `Array.from({length: 3}, (_, i) => i).join()`,
		`'abc'.replace('b', (m) => m.toUpperCase())`, `'a-b-c'.replaceAll('-', '$$')`, `String.raw` + "`a${1}b`",
	} {
		p, err := Compile("b.js", `function f() { return (0, eval)('1'), null } function g() { return eval0() }`, []string{"f"}, nil, Limits{}, nil)
		_ = p
		_ = err
		q, err := Compile("c.js", "function f() { return (function(){ "+src+" ; return 'ok:' + String("+lastExpr(src)+") })() }", []string{"f"}, nil, Limits{}, nil)
		if err != nil {
			t.Logf("%-60.60s COMPILE %v", src, err)
			continue
		}
		start := time.Now()
		out, err := q.Call(context.Background(), "f")
		t.Logf("%-60.60s -> %.200s | %v (%v)", src, out, err, time.Since(start))
	}
}

func lastExpr(src string) string { return "undefined" }
