package packages

import (
	"math"

	"go.yaml.in/yaml/v3"

	"switchboard/packages/yamlwalk"
)

// The package's YAML files are walked node by node by the closed-YAML walker (yamlwalk), which
// the runtime file's loader uses too: every mapping is closed (an unknown key is reported with
// its line and member path) and every problem of a file is collected instead of only the
// first. This file gives the walker the names the loaders call.

// ydoc is one YAML file of the package, recording diagnostics under its path and code.
type ydoc struct {
	path  string
	code  string
	diags *diagnostics
}

func (y *ydoc) file() *yamlwalk.File {
	return &yamlwalk.File{Path: y.path, Code: y.code, Diags: &y.diags.Diagnostics}
}

// parse decodes exactly one YAML document and returns its root node, or nil after recording
// a diagnostic.
func (y *ydoc) parse(data []byte) *yaml.Node { return y.file().Parse(data) }

func (y *ydoc) errf(n *yaml.Node, member, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	y.diags.add(y.code, y.path, line, member, format, args...)
}

func memberIndex(parent string, i int) string { return yamlwalk.Index(parent, i) }

// ymap is a closed YAML mapping: its known keys with their value nodes (values holds the
// walker's Nodes). A key whose value is null counts as absent.
type ymap struct {
	*yamlwalk.Map
	y      *ydoc
	values map[string]*yaml.Node
}

// mapping checks that n is a mapping whose keys are all in allowed, each at most once.
// It returns nil (after recording a diagnostic) when n is not a mapping.
func (y *ydoc) mapping(n *yaml.Node, member string, allowed ...string) *ymap {
	if allowed == nil {
		allowed = []string{}
	}
	m := y.file().Map(n, member, 0, allowed)
	if !m.Found() {
		if yamlwalk.Resolve(n) == nil {
			y.errf(n, member, "must be a mapping")
		}
		return nil
	}
	return &ymap{Map: m, y: y, values: m.Nodes}
}

func (m *ymap) has(key string) bool { return m.Has(key) }

func (m *ymap) sub(key string) string { return m.Sub(key) }

func (m *ymap) errf(key, format string, args ...any) { m.Fail(key, format, args...) }

func (m *ymap) required(key string) bool { return m.Required(key) }

// str returns a string member; ok is false when it is absent or not a string.
func (m *ymap) str(key string) (string, bool) { return m.Str(key) }

// integer returns an integer member; ok is false when it is absent or not an integer.
func (m *ymap) integer(key string) (int, bool) {
	v, ok := m.Int(key, math.MinInt32, math.MaxInt32)
	return int(v), ok
}

// number returns an integer or decimal member.
func (m *ymap) number(key string) (float64, bool) { return m.Float(key) }

// boolean returns a boolean member (false when absent).
func (m *ymap) boolean(key string) (bool, bool) { return m.Bool(key) }

// seq returns the items of a sequence member, resolved; nil when absent or not a sequence.
func (m *ymap) seq(key string) []*yaml.Node { return m.Seq(key) }

// strList returns a list of non-empty, distinct strings. Items that are not valid are
// reported and left out.
func (m *ymap) strList(key string) []string { return m.Strings(key) }
