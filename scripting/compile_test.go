package scripting

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCompileRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		src      string
		required []string
		optional []string
		want     string
	}{
		{"syntax error", "function prepare( { return 1 }", []string{"prepare"}, nil, "test.js:1:28: syntax error: Unexpected number"},
		{"module syntax", "export function prepare() {}", []string{"prepare"}, nil, "syntax error"},
		{"source over 64 KiB", "function prepare() {}\n//" + strings.Repeat("x", 64<<10), []string{"prepare"}, nil, "over the limit of 65536"},
		{"missing required entry point", "function interpret() {}", []string{"prepare", "receipt"}, []string{"interpret"}, "not defined as functions: prepare, receipt"},
		{"required entry point not a function", "var prepare = 42", []string{"prepare"}, nil, "prepare is a number, not a function"},
		{"optional entry point not a function", "function prepare() {}\nconst interpret = 'no'", []string{"prepare"}, []string{"interpret"}, "interpret is a string, not a function"},
		{"top-level code throws", "function prepare() {}\nthrow new Error('at load')", []string{"prepare"}, nil, "top-level code: failed: Error: at load at <anonymous> (test.js:2:7)"},
		{"top-level code loops", "function prepare() {}\nfor (;;) {}", []string{"prepare"}, nil, "top-level code: deadline"},
		{"top-level code hits a cap", "'x'.repeat(2**30)\nfunction prepare() {}", []string{"prepare"}, nil, "top-level code: failed: RangeError"},
		{"BigInt literal", "function prepare() {\n  return 1n << 40n\n}", []string{"prepare"}, nil, "test.js:2:10: BigInt literals are not allowed"},
		{"entry point not an identifier", "function prepare() {}", []string{"pre-pare"}, nil, `"pre-pare" is not a JavaScript identifier`},
		{"entry point declared twice", "function prepare() {}", []string{"prepare"}, []string{"prepare"}, `"prepare" is declared twice`},
		{"script assigns a read-only global", "JSON = {}\nfunction prepare() {}", []string{"prepare"}, nil, "top-level code: failed: TypeError"},
		{"script adds a global", "globalThis.cache = {}\nfunction prepare() {}", []string{"prepare"}, nil, "top-level code: failed: TypeError"},
		{"script assigns an undeclared name", "cache = {}\nfunction prepare() {}", []string{"prepare"}, nil, "top-level code: failed: ReferenceError"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			p, err := Compile("test.js", tt.src, tt.required, tt.optional, Limits{}, nil)
			if err == nil {
				p.Close()
				t.Fatal("compiled")
			}
			if !errors.Is(err, ErrInvalidScript) {
				t.Errorf("err = %v, want ErrInvalidScript", err)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "test.js") {
				t.Errorf("err = %q, want it to contain %q and the script name", err, tt.want)
			}
			if ClassOf(err) != "" {
				t.Errorf("ClassOf(compile error) = %q", ClassOf(err))
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

func TestCompileResolvesEveryKindOfGlobalBinding(t *testing.T) {
	t.Parallel()
	src := `
function prepare() { return 'declaration' }
var interpret = function () { return 'var' };
let receipt = () => 'let';
const other = function named() { return 'const' };
`
	p, err := Compile("kinds.js", src, []string{"prepare", "interpret"}, []string{"receipt", "other", "absent"}, Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for entry, want := range map[string]string{"prepare": "declaration", "interpret": "var", "receipt": "let", "other": "const"} {
		if !p.Has(entry) {
			t.Errorf("Has(%s) = false", entry)
		}
		if got := mustCall(t, p, entry); got != jsonString(want) {
			t.Errorf("%s() = %s, want %q", entry, got, want)
		}
	}
	for _, entry := range []string{"absent", "undeclared", "toString"} {
		if p.Has(entry) {
			t.Errorf("Has(%s) = true", entry)
		}
		if _, err := p.Call(context.Background(), entry); !errors.Is(err, ErrNoEntry) || ClassOf(err) != "" {
			t.Errorf("Call(%s) err = %v, want ErrNoEntry", entry, err)
		}
	}
}

func TestCompileAcceptsSourceAtTheLimit(t *testing.T) {
	t.Parallel()
	head := "function f() { return 1 }\n//"
	src := head + strings.Repeat("x", 1000-len(head))
	p, err := Compile("limit.js", src, []string{"f"}, nil, Limits{SourceBytes: 1000}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p.Close()
	if _, err := Compile("limit.js", src+"x", []string{"f"}, nil, Limits{SourceBytes: 1000}, nil); !errors.Is(err, ErrInvalidScript) {
		t.Fatalf("one byte over: err = %v", err)
	}
}

func TestErrorFormatAndClassOf(t *testing.T) {
	t.Parallel()
	err := newError("prepare", ClassDeadline, strings.Repeat("é", 1000))
	if len(err.Message) > maxMessageBytes || !strings.HasSuffix(err.Message, "…") {
		t.Errorf("message not truncated: %d bytes", len(err.Message))
	}
	if !strings.HasPrefix(err.Error(), "script prepare: deadline: é") {
		t.Errorf("Error() = %.40q", err.Error())
	}
	wrapped := errors.Join(errors.New("context"), err)
	if ClassOf(wrapped) != ClassDeadline || ClassOf(nil) != "" || ClassOf(errors.New("x")) != "" {
		t.Error("ClassOf does not see through wrapping or misreports plain errors")
	}
}
