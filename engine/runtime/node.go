package runtime

import (
	"math"

	"go.yaml.in/yaml/v3"

	"switchboard/packages/yamlwalk"
)

// The runtime file is walked by the closed-YAML walker the package loader uses too
// (packages/yamlwalk): closed mappings, lines and members, typed values. This file adapts it
// to the runtime's needs: ${…} substitution in every value it reads, the member lines that
// CheckPackage cites, and the names the decode_*.go files call.

// reader walks the YAML node tree of one runtime file, substituting environment variables in
// the values it reads and recording every problem instead of stopping at the first.
type reader struct {
	dir     string // the runtime file's folder: relative paths start here
	getenv  func(string) string
	diags   *diagnostics
	secrets secretSources
	lines   map[string]int // member -> line, kept for CheckPackage's diagnostics
	file    *yamlwalk.File
}

// walker is the runtime file as the walker reads it: runtime.invalid problems, ${…} expanded.
func (r *reader) walker() *yamlwalk.File {
	if r.file == nil {
		r.file = &yamlwalk.File{Path: r.diags.path, Code: CodeInvalid, Diags: &r.diags.Diagnostics,
			Expand: func(s string) (string, bool, error) { return expand(s, r.getenv) }}
	}
	return r.file
}

// mapping is one closed YAML mapping of the runtime file: only the keys it was opened with are
// allowed. keys and vals are the walker's Keys and Nodes.
type mapping struct {
	*yamlwalk.Map
	r    *reader
	keys []string
	vals map[string]*yaml.Node
}

// member joins a parent member and a key into a dotted member.
func member(parent, key string) string { return yamlwalk.Member(parent, key) }

// deref follows aliases and returns nil for a YAML null.
func deref(n *yaml.Node) *yaml.Node { return yamlwalk.Resolve(n) }

// open reads n as a mapping at member. allowed lists its keys; nil allows any key (a map keyed
// by ids, such as providers). A nil or null n is an empty mapping located at line.
func (r *reader) open(n *yaml.Node, memberPath string, line int, allowed []string) *mapping {
	return r.wrap(r.walker().Map(n, memberPath, line, allowed))
}

func (r *reader) wrap(w *yamlwalk.Map) *mapping {
	for _, k := range w.Keys {
		r.lines[w.Sub(k)] = w.KeyLine(k)
	}
	return &mapping{Map: w, r: r, keys: w.Keys, vals: w.Nodes}
}

// has reports whether key is present with a non-null value.
func (m *mapping) has(key string) bool { return m.Has(key) }

// at returns the member path and line of key (the mapping's line when key is absent).
func (m *mapping) at(key string) (string, int) { return m.At(key) }

// fail records a runtime.invalid problem at key.
func (m *mapping) fail(key, msg string, args ...any) { m.Fail(key, msg, args...) }

// child opens key as a closed mapping.
func (m *mapping) child(key string, allowed ...string) *mapping {
	return m.r.wrap(m.Child(key, allowed...))
}

// scalar returns key's value after substitution. ok is false when key is absent, null, not a
// scalar (reported) or fails substitution (reported). used reports a ${…} expression.
func (m *mapping) scalar(key string) (text string, n *yaml.Node, used, ok bool) { return m.Scalar(key) }

// str returns key's string value, or "" when absent.
func (m *mapping) str(key string) string {
	text, _ := m.Text(key)
	return text
}

// required returns key's string value, recording "required" when it is absent or empty.
func (m *mapping) required(key string) string { return m.RequiredText(key) }

// integer returns key's value as an integer in [lo, hi], or def when absent or refused. A
// literal must be a YAML integer; a value built by substitution must be decimal digits.
func (m *mapping) integer(key string, def, lo, hi int64) int64 {
	if v, ok := m.Int(key, lo, hi); ok {
		return v
	}
	return def
}

// boolean returns key's value as a boolean, or def when absent or refused.
func (m *mapping) boolean(key string, def bool) bool {
	if v, ok := m.Bool(key); ok {
		return v
	}
	return def
}

// positiveFloat returns key's value as a finite number above zero, or 0 when absent.
func (m *mapping) positiveFloat(key string) float64 {
	v, ok := m.Float(key)
	if ok && !(v > 0 && v < math.Inf(1)) {
		m.fail(key, "must be a number above 0")
		return 0
	}
	return v
}

// strings returns key's value as a list of non-empty, distinct strings (nil when absent).
func (m *mapping) strings(key string) []string {
	if !m.has(key) {
		return nil
	}
	return m.Texts(key)
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
