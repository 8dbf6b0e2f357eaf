package yamlwalk

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// walk parses doc as a file and opens its root with allowed keys.
func walk(t *testing.T, doc string, expand func(string) (string, bool, error), allowed ...string) (*Map, *Diagnostics) {
	t.Helper()
	d := &Diagnostics{}
	f := &File{Path: "f.yaml", Code: "x.invalid", Diags: d, Expand: expand}
	root := f.Parse([]byte(doc))
	if root == nil {
		t.Fatalf("parse: %v", d.List)
	}
	return f.Map(root, "", 1, allowed), d
}

// only fails unless d holds exactly one diagnostic at member and line whose message contains msg.
func only(t *testing.T, d *Diagnostics, member string, line int, msg string) {
	t.Helper()
	if len(d.List) != 1 {
		t.Fatalf("diagnostics %v, want one at %s", d.List, member)
	}
	got := d.List[0]
	if got.Member != member || got.Line != line || !strings.Contains(got.Message, msg) || got.Code != "x.invalid" || got.Path != "f.yaml" {
		t.Fatalf("diagnostic %+v, want %s at line %d saying %q", got, member, line, msg)
	}
}

func TestMappingsAreClosed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc, member string
		line              int
		msg               string
	}{
		{"unknown key", "a: 1\nb:\n  c: 2\n  zz: 3\n", "b.zz", 4, "unknown key (allowed: c)"},
		{"duplicate key", "a: 1\nb: {c: 1, c: 2}\n", "b.c", 2, "duplicate key"},
		{"merge key", "a: &x {c: 1}\nb: {<<: *x}\n", "b.<<", 2, "merge keys are not supported"},
		{"key not a string", "a: 1\nb: {[1]: 2}\n", "b", 2, "keys must be plain strings"},
		{"not a mapping", "a: 1\nb: [1]\n", "b", 2, "must be a mapping"},
		{"closed empty", "a: 1\nb: {c: 1}\nd: {e: 1}\n", "d.e", 3, "this mapping takes none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, d := walk(t, tc.doc, nil, "a", "b", "d")
			m.Child("b", "c")
			m.Child("d")
			only(t, d, tc.member, tc.line, tc.msg)
		})
	}
}

func TestMapKeysNodesAndLines(t *testing.T) {
	t.Parallel()
	m, d := walk(t, "b: x\na: ~\nc: &n {k: v}\ne: *n\n", nil, "a", "b", "c", "e")
	if !d.Empty() || !m.Found() {
		t.Fatalf("%v", d.List)
	}
	if !reflect.DeepEqual(m.Keys, []string{"b", "a", "c", "e"}) {
		t.Fatalf("keys %v", m.Keys)
	}
	if _, present := m.Nodes["a"]; !present || m.Has("a") || m.Node("a") != nil {
		t.Fatal("a null value is present but not Has")
	}
	if m.Has("zz") || m.KeyLine("zz") != 1 || m.KeyLine("c") != 3 {
		t.Fatalf("lines: zz %d, c %d", m.KeyLine("zz"), m.KeyLine("c"))
	}
	if e := m.Child("e", "k"); !e.Found() || e.Member != "e" {
		t.Fatal("an alias is followed to its mapping")
	}
	if mem, line := m.Child("c", "k").At("k"); mem != "c.k" || line != 3 {
		t.Fatalf("At = %s %d", mem, line)
	}
	absent := m.Child("zz", "k")
	if absent.Found() || absent.Line != 1 || len(absent.Keys) != 0 {
		t.Fatal("an absent child is an empty mapping at its parent's line")
	}
	if !m.Required("b") || m.Required("zz") {
		t.Fatal("Required")
	}
	only(t, d, "zz", 1, "is required")
}

func TestTypedValues(t *testing.T) {
	t.Parallel()
	doc := "s: text\nq: \"1\"\nn: 1\ni: 42\nbig: 99999999999\nb: true\nf: 1.5\nnan: .nan\nl: [x, y]\nmap: {k: v}\n"
	m, d := walk(t, doc, nil, "s", "q", "n", "i", "big", "b", "f", "nan", "l", "map")
	if s, ok := m.Str("s"); !ok || s != "text" {
		t.Fatal("Str")
	}
	if q, ok := m.Str("q"); !ok || q != "1" {
		t.Fatal("a quoted number is a string")
	}
	if i, ok := m.Int("i", 0, 100); !ok || i != 42 {
		t.Fatal("Int")
	}
	if b, ok := m.Bool("b"); !ok || !b {
		t.Fatal("Bool")
	}
	if f, ok := m.Float("f"); !ok || f != 1.5 {
		t.Fatal("Float")
	}
	if n, ok := m.Text("n"); !ok || n != "1" {
		t.Fatal("Text takes any scalar")
	}
	if !d.Empty() {
		t.Fatalf("%v", d.List)
	}
	checks := []struct {
		read func() bool
		msg  string
	}{
		{func() bool { _, ok := m.Str("n"); return ok }, "must be a string (quote it)"},
		{func() bool { _, ok := m.Int("big", 0, 100); return ok }, "must be an integer from 0 to 100"},
		{func() bool { _, ok := m.Int("s", 0, 100); return ok }, "must be an integer from 0 to 100"},
		{func() bool { _, ok := m.Bool("n"); return ok }, "must be true or false"},
		{func() bool { _, ok := m.Float("nan"); return ok }, "must be a finite number"},
		{func() bool { _, ok := m.Text("map"); return ok }, "must be a single value"},
		{func() bool { return m.Seq("s") != nil }, "must be a list"},
	}
	for i, c := range checks {
		if c.read() {
			t.Errorf("check %d took a wrong value", i)
		}
		if last := d.List[len(d.List)-1]; !strings.Contains(last.Message, c.msg) {
			t.Errorf("check %d: %q, want %q", i, last.Message, c.msg)
		}
	}
}

func TestLists(t *testing.T) {
	t.Parallel()
	m, d := walk(t, "l:\n  - a\n  - 1\n  - \"\"\n  - a\n  - [x]\n  - ~\n  - b\n", nil, "l")
	if got := m.Strings("l"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("Strings = %v", got)
	}
	want := []string{"l[1]: must be a string", "l[2]: must be a non-empty string", "l[3]: is listed twice",
		"l[4]: must be a string", "l[5]: must be a string"}
	var got []string
	for _, x := range d.List {
		got = append(got, x.Member+": "+x.Message)
	}
	if !reflect.DeepEqual(got, want) || d.List[0].Line != 3 {
		t.Fatalf("diagnostics %v (line %d), want %v", got, d.List[0].Line, want)
	}
	m, d = walk(t, "l: [a, 1, true]\n", nil, "l")
	if got := m.Texts("l"); !reflect.DeepEqual(got, []string{"a", "1", "true"}) || !d.Empty() {
		t.Fatalf("Texts = %v, %v", got, d.List)
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"N": "7", "B": "false", "F": "2.5"}
	expand := func(s string) (string, bool, error) {
		if !strings.HasPrefix(s, "$") {
			return s, false, nil
		}
		v, ok := env[s[1:]]
		if !ok {
			return "", true, errors.New("variable unset")
		}
		return v, true, nil
	}
	m, d := walk(t, "n: $N\nb: $B\nf: $F\nl: [$N, x]\nu: $U\n", expand, "n", "b", "f", "l", "u")
	if n, ok := m.Int("n", 0, 10); !ok || n != 7 {
		t.Fatal("an integer built by substitution")
	}
	if b, ok := m.Bool("b"); !ok || b {
		t.Fatal("a boolean built by substitution")
	}
	if f, ok := m.Float("f"); !ok || f != 2.5 {
		t.Fatal("a number built by substitution")
	}
	if l := m.Texts("l"); !reflect.DeepEqual(l, []string{"7", "x"}) {
		t.Fatalf("list items are substituted: %v", l)
	}
	if _, ok := m.Text("u"); ok {
		t.Fatal("a failed substitution is read")
	}
	only(t, d, "u", 5, "variable unset")
}

func TestParse(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		"":                    "the file is empty",
		"# only a comment\n":  "the file is empty",
		"a: 1\n---\nb: 2\n":   "exactly one YAML document",
		"a: 1\nb: [\n":        "not valid YAML",
		"a: 1\n  b: 2\n":      "not valid YAML",
		"a: *unknown\n":       "not valid YAML",
		"---\na: 1\n---\n]\n": "not valid YAML",
	} {
		d := &Diagnostics{}
		f := &File{Path: "f.yaml", Code: "x.invalid", Diags: d}
		if root := f.Parse([]byte(doc)); root != nil || len(d.List) != 1 || !strings.Contains(d.List[0].Message, want) {
			t.Errorf("Parse(%q) = %v, %v; want %q", doc, root, d.List, want)
		}
	}
	d := &Diagnostics{}
	f := &File{Path: "f.yaml", Code: "x.invalid", Diags: d}
	f.Parse([]byte("a: 1\nb: [\n"))
	if d.List[0].Line == 0 {
		t.Errorf("a syntax error has no line: %v", d.List)
	}
}

func TestLoadErrorAndDiagnostics(t *testing.T) {
	t.Parallel()
	var d Diagnostics
	if d.Err() != nil {
		t.Fatal("no problem, no error")
	}
	d.Add("runtime.unreadable", "/r.yaml", 0, "", "cannot read %s", "the file")
	d.Add("secret.unreadable", "/r.yaml", 4, "audit.keyRef", "secret file %s is empty", "audit.key")
	var le *LoadError
	if !errors.As(d.Err(), &le) || !le.Environmental() {
		t.Fatalf("environmental problems only: %v", d.Err())
	}
	d.Add("runtime.invalid", "/r.yaml", 2, "listen", "must be a mapping")
	errors.As(d.Err(), &le)
	if le.Environmental() {
		t.Fatal("a refusal wins over the environment")
	}
	want := "error[runtime.unreadable] /r.yaml: cannot read the file\n" +
		"error[secret.unreadable] /r.yaml:4: audit.keyRef: secret file audit.key is empty\n" +
		"error[runtime.invalid] /r.yaml:2: listen: must be a mapping"
	if le.Error() != want {
		t.Fatalf("Error() =\n%s\nwant\n%s", le.Error(), want)
	}
}
