package packages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The package's YAML files are decoded node by node rather than into structs, so that every
// mapping is closed (an unknown key is reported with its line and member path) and every problem
// of a file is collected instead of only the first.

// ydoc decodes one YAML file, recording diagnostics under its path and code.
type ydoc struct {
	path  string
	code  string
	diags *diagnostics
}

// yamlLine extracts "line N" from a yaml.v3 parser error.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parse decodes exactly one YAML document and returns its root node, or nil after recording
// a diagnostic.
func (y *ydoc) parse(data []byte) (root *yaml.Node) {
	defer func() {
		// yaml.v3 has panicked on hostile input in the past; a package file must never take
		// the process down.
		if r := recover(); r != nil {
			y.diags.add(y.code, y.path, 0, "", "the YAML parser failed on this file")
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			y.diags.add(y.code, y.path, 0, "", "the file is empty")
			return nil
		}
		y.syntaxError(err)
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			y.syntaxError(err)
		} else {
			y.diags.add(y.code, y.path, extra.Line, "", "the file holds more than one YAML document")
		}
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		y.diags.add(y.code, y.path, 0, "", "the file is empty")
		return nil
	}
	return doc.Content[0]
}

func (y *ydoc) syntaxError(err error) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		y.diags.add(y.code, y.path, line, "", "invalid YAML: %s", m[2])
		return
	}
	y.diags.add(y.code, y.path, 0, "", "invalid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
}

func (y *ydoc) errf(n *yaml.Node, member, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	y.diags.add(y.code, y.path, line, member, format, args...)
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 32; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func memberKey(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

func memberIndex(parent string, i int) string { return fmt.Sprintf("%s[%d]", parent, i) }

// ymap is a closed YAML mapping: its known keys with their value nodes. A key whose value is
// null counts as absent.
type ymap struct {
	y      *ydoc
	node   *yaml.Node
	member string
	values map[string]*yaml.Node
	keys   map[string]*yaml.Node
}

// mapping checks that n is a mapping whose keys are all in allowed, each at most once.
// It returns nil (after recording a diagnostic) when n is not a mapping.
func (y *ydoc) mapping(n *yaml.Node, member string, allowed ...string) *ymap {
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		what := member
		if what == "" {
			what = "the document"
		}
		y.errf(n, member, "%s must be a mapping", what)
		return nil
	}
	m := &ymap{y: y, node: n, member: member, values: map[string]*yaml.Node{}, keys: map[string]*yaml.Node{}}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k == nil || k.Kind != yaml.ScalarNode {
			y.errf(n.Content[i], member, "a key must be a plain string")
			continue
		}
		name := k.Value
		if !contains(allowed, name) {
			y.errf(k, memberKey(member, name), "unknown key %q (allowed: %s)", name, strings.Join(allowed, ", "))
			continue
		}
		if _, dup := m.keys[name]; dup {
			y.errf(k, memberKey(member, name), "duplicate key %q", name)
			continue
		}
		m.keys[name] = k
		if v != nil && !isNull(v) {
			m.values[name] = v
		}
	}
	return m
}

func (m *ymap) has(key string) bool { _, ok := m.values[key]; return ok }

func (m *ymap) sub(key string) string { return memberKey(m.member, key) }

// line returns the line of a key, or of the mapping when the key is absent.
func (m *ymap) line(key string) int {
	if k, ok := m.keys[key]; ok {
		return k.Line
	}
	return m.node.Line
}

func (m *ymap) errf(key, format string, args ...any) {
	m.y.diags.add(m.y.code, m.y.path, m.line(key), m.sub(key), format, args...)
}

func (m *ymap) required(key string) bool {
	if m.has(key) {
		return true
	}
	m.errf(key, "is required")
	return false
}

func (m *ymap) scalar(key, tag, want string) (*yaml.Node, bool) {
	v, ok := m.values[key]
	if !ok {
		return nil, false
	}
	if v.Kind != yaml.ScalarNode || !contains(strings.Fields(tag), v.Tag) {
		hint := ""
		if v.Kind == yaml.ScalarNode && tag == "!!str" {
			hint = " (quote it)"
		}
		m.y.errf(v, m.sub(key), "must be %s%s", want, hint)
		return nil, false
	}
	return v, true
}

// str returns a string member; ok is false when it is absent or not a string.
func (m *ymap) str(key string) (string, bool) {
	v, ok := m.scalar(key, "!!str", "a string")
	if !ok {
		return "", false
	}
	return v.Value, true
}

// integer returns an integer member; ok is false when it is absent or not an integer.
func (m *ymap) integer(key string) (int, bool) {
	v, ok := m.scalar(key, "!!int", "an integer")
	if !ok {
		return 0, false
	}
	var i int64
	if err := v.Decode(&i); err != nil || i > math.MaxInt32 || i < math.MinInt32 {
		m.y.errf(v, m.sub(key), "must be an integer in range")
		return 0, false
	}
	return int(i), true
}

// number returns an integer or decimal member.
func (m *ymap) number(key string) (float64, bool) {
	v, ok := m.scalar(key, "!!int !!float", "a number")
	if !ok {
		return 0, false
	}
	var f float64
	if err := v.Decode(&f); err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		m.y.errf(v, m.sub(key), "must be a finite number")
		return 0, false
	}
	return f, true
}

// boolean returns a boolean member (false when absent).
func (m *ymap) boolean(key string) (bool, bool) {
	v, ok := m.scalar(key, "!!bool", "true or false")
	if !ok {
		return false, false
	}
	var b bool
	if err := v.Decode(&b); err != nil {
		m.y.errf(v, m.sub(key), "must be true or false")
		return false, false
	}
	return b, true
}

// seq returns the items of a sequence member, resolved; nil when absent or not a sequence.
func (m *ymap) seq(key string) []*yaml.Node {
	v, ok := m.values[key]
	if !ok {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		m.y.errf(v, m.sub(key), "must be a list")
		return nil
	}
	items := make([]*yaml.Node, len(v.Content))
	for i, it := range v.Content {
		items[i] = resolve(it)
	}
	return items
}

// strList returns a list of non-empty, distinct strings. Items that are not valid are
// reported and left out.
func (m *ymap) strList(key string) []string {
	items := m.seq(key)
	out := make([]string, 0, len(items))
	for i, it := range items {
		member := memberIndex(m.sub(key), i)
		if it == nil || it.Kind != yaml.ScalarNode || it.Tag != "!!str" {
			m.y.errf(it, member, "must be a string")
			continue
		}
		if it.Value == "" {
			m.y.errf(it, member, "must not be empty")
			continue
		}
		if contains(out, it.Value) {
			m.y.errf(it, member, "%q is listed twice", it.Value)
			continue
		}
		out = append(out, it.Value)
	}
	return out
}
