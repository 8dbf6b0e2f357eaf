package runtime

import (
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// reader walks the YAML node tree of one runtime file, substituting environment variables in
// the values it reads and recording every problem instead of stopping at the first.
type reader struct {
	dir     string // the runtime file's folder: relative paths start here
	getenv  func(string) string
	diags   *diagnostics
	secrets secretSources
	lines   map[string]int // member -> line, kept for CheckPackage's diagnostics
}

// mapping is one closed YAML mapping: only the keys it was opened with are allowed.
type mapping struct {
	r      *reader
	member string // dotted path of the mapping itself, "" for the document
	line   int    // line of the mapping, or of its parent key when absent
	keys   []string
	vals   map[string]*yaml.Node
	klines map[string]int
}

// member joins a parent member and a key into a dotted member.
func member(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// deref follows aliases (bounded, so a cycle cannot spin) and returns nil for a YAML null.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	if n == nil || n.Kind == yaml.AliasNode {
		return nil
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil
	}
	return n
}

// open reads n as a mapping at member. allowed lists its keys; nil allows any key (a map keyed
// by ids, such as providers). A nil or null n is an empty mapping located at line.
func (r *reader) open(n *yaml.Node, memberPath string, line int, allowed []string) *mapping {
	m := &mapping{r: r, member: memberPath, line: line, vals: map[string]*yaml.Node{}, klines: map[string]int{}}
	n = deref(n)
	if n == nil {
		return m
	}
	m.line = n.Line
	if n.Kind != yaml.MappingNode {
		r.diags.add(CodeInvalid, n.Line, memberPath, "must be a mapping")
		return m
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			r.diags.add(CodeInvalid, n.Content[i].Line, memberPath, "keys must be plain strings")
			continue
		}
		key := k.Value
		switch {
		case key == "<<":
			r.diags.add(CodeInvalid, k.Line, member(memberPath, key), "YAML merge keys are not supported")
			continue
		case allowed != nil && !contains(allowed, key):
			r.diags.add(CodeInvalid, k.Line, member(memberPath, key), "unknown key")
			continue
		}
		if _, dup := m.vals[key]; dup {
			r.diags.add(CodeInvalid, k.Line, member(memberPath, key), "duplicate key")
			continue
		}
		m.keys = append(m.keys, key)
		m.vals[key] = n.Content[i+1]
		m.klines[key] = k.Line
		r.lines[member(memberPath, key)] = k.Line
	}
	return m
}

// has reports whether key is present with a non-null value.
func (m *mapping) has(key string) bool { return deref(m.vals[key]) != nil }

// at returns the member path and line of key (the mapping's line when key is absent).
func (m *mapping) at(key string) (string, int) {
	if l, ok := m.klines[key]; ok {
		return member(m.member, key), l
	}
	return member(m.member, key), m.line
}

// fail records a runtime.invalid problem at key.
func (m *mapping) fail(key, msg string, args ...any) {
	mem, line := m.at(key)
	m.r.diags.add(CodeInvalid, line, mem, msg, args...)
}

// child opens key as a closed mapping.
func (m *mapping) child(key string, allowed ...string) *mapping {
	mem, line := m.at(key)
	if allowed == nil {
		allowed = []string{}
	}
	return m.r.open(m.vals[key], mem, line, allowed)
}

// scalar returns key's value after substitution. ok is false when key is absent, null, not a
// scalar (reported) or fails substitution (reported). used reports a ${…} expression.
func (m *mapping) scalar(key string) (text string, n *yaml.Node, used, ok bool) {
	n = deref(m.vals[key])
	if n == nil {
		return "", nil, false, false
	}
	if n.Kind != yaml.ScalarNode {
		m.fail(key, "must be a single value, not a list or mapping")
		return "", nil, false, false
	}
	text, used, err := expand(n.Value, m.r.getenv)
	if err != nil {
		m.fail(key, "%s", err.Error())
		return "", nil, used, false
	}
	return text, n, used, true
}

// str returns key's string value, or "" when absent.
func (m *mapping) str(key string) string {
	text, _, _, _ := m.scalar(key)
	return text
}

// required returns key's string value, recording "required" when it is absent or empty.
func (m *mapping) required(key string) string {
	text, _, _, ok := m.scalar(key)
	if ok && text == "" {
		m.fail(key, "must not be empty")
	}
	if !ok && !m.has(key) {
		m.fail(key, "is required")
	}
	return text
}

// integer returns key's value as an integer in [lo, hi], or def when absent. A literal must be
// a YAML integer; a value built by substitution must be decimal digits.
func (m *mapping) integer(key string, def, lo, hi int64) int64 {
	text, n, used, ok := m.scalar(key)
	if !ok {
		return def
	}
	var v int64
	var err error
	if used {
		v, err = strconv.ParseInt(text, 10, 64)
	} else if n.ShortTag() == "!!int" {
		err = n.Decode(&v)
	} else {
		err = strconv.ErrSyntax
	}
	if err != nil || v < lo || v > hi {
		m.fail(key, "must be an integer from %d to %d", lo, hi)
		return def
	}
	return v
}

// boolean returns key's value as a boolean, or def when absent.
func (m *mapping) boolean(key string, def bool) bool {
	text, n, used, ok := m.scalar(key)
	if !ok {
		return def
	}
	var v bool
	var err error
	if used {
		v, err = strconv.ParseBool(text)
	} else if n.ShortTag() == "!!bool" {
		err = n.Decode(&v)
	} else {
		err = strconv.ErrSyntax
	}
	if err != nil {
		m.fail(key, "must be true or false")
		return def
	}
	return v
}

// positiveFloat returns key's value as a finite number above zero, or 0 when absent.
func (m *mapping) positiveFloat(key string) float64 {
	text, n, used, ok := m.scalar(key)
	if !ok {
		return 0
	}
	var v float64
	var err error
	if used {
		v, err = strconv.ParseFloat(text, 64)
	} else if tag := n.ShortTag(); tag == "!!float" || tag == "!!int" {
		err = n.Decode(&v)
	} else {
		err = strconv.ErrSyntax
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
		m.fail(key, "must be a number above 0")
		return 0
	}
	return v
}

// strings returns key's value as a list of non-empty strings (nil when absent).
func (m *mapping) strings(key string) []string {
	mem, _ := m.at(key)
	n := deref(m.vals[key])
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		m.fail(key, "must be a list")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		itemMember := mem + "[" + strconv.Itoa(i) + "]"
		item = deref(item)
		if item == nil || item.Kind != yaml.ScalarNode {
			m.r.diags.add(CodeInvalid, n.Line, itemMember, "must be a non-empty string")
			continue
		}
		text, _, err := expand(item.Value, m.r.getenv)
		if err != nil {
			m.r.diags.add(CodeInvalid, item.Line, itemMember, "%s", err.Error())
			continue
		}
		if text == "" {
			m.r.diags.add(CodeInvalid, item.Line, itemMember, "must be a non-empty string")
			continue
		}
		out = append(out, text)
	}
	return out
}

// secret resolves key's secret reference. required records "is required" when absent.
func (m *mapping) secret(key string, required bool) Secret {
	ref, _, _, ok := m.scalar(key)
	if !ok {
		if required && !m.has(key) {
			m.fail(key, "is required")
		}
		return Secret{}
	}
	mem, line := m.at(key)
	return m.r.resolveSecret(line, mem, ref)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
