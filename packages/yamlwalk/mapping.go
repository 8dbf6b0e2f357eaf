package yamlwalk

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Map is one closed YAML mapping: the keys it was opened with are the only ones allowed, each
// at most once, and every problem is recorded with the file, line and member.
type Map struct {
	File *File
	// Member is the dotted path of the mapping itself, "" for the document.
	Member string
	// Line is the mapping's line, or where it would be (its parent key's) when absent.
	Line int
	// Keys are the allowed keys present, in document order.
	Keys []string
	// Nodes holds each present key's value, aliases followed; a null value is kept as its
	// node, so that a key given as null is present but not Has.
	Nodes    map[string]*yaml.Node
	keyLines map[string]int
	found    bool
}

// Map reads n as a mapping at member; line locates it when n is absent. allowed lists its keys
// (nil allows any key: a mapping keyed by ids). An absent or null n is an empty mapping; any
// other node that is not a mapping is recorded ("must be a mapping") and read as an empty one.
// Keys that are not plain strings, YAML merge keys (<<), keys not allowed and repeated keys are
// recorded and left out.
func (f *File) Map(n *yaml.Node, member string, line int, allowed []string) *Map {
	m := &Map{File: f, Member: member, Line: line, Nodes: map[string]*yaml.Node{}, keyLines: map[string]int{}}
	n = follow(n)
	if IsNull(n) {
		return m
	}
	m.Line = n.Line
	if n.Kind != yaml.MappingNode {
		f.Add(n.Line, member, "must be a mapping")
		return m
	}
	m.found = true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := follow(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			f.Add(n.Content[i].Line, member, "keys must be plain strings")
			continue
		}
		key := k.Value
		switch {
		case key == "<<":
			f.Add(k.Line, Member(member, key), "YAML merge keys are not supported")
			continue
		case allowed != nil && !contains(allowed, key):
			if len(allowed) == 0 {
				f.Add(k.Line, Member(member, key), "unknown key (this mapping takes none)")
			} else {
				f.Add(k.Line, Member(member, key), "unknown key (allowed: %s)", strings.Join(allowed, ", "))
			}
			continue
		}
		if _, dup := m.Nodes[key]; dup {
			f.Add(k.Line, Member(member, key), "duplicate key")
			continue
		}
		m.Keys = append(m.Keys, key)
		m.Nodes[key] = follow(n.Content[i+1])
		m.keyLines[key] = k.Line
	}
	return m
}

// Found reports whether the node was a mapping (not absent, null or another kind).
func (m *Map) Found() bool { return m.found }

// Has reports whether key is present with a value other than null.
func (m *Map) Has(key string) bool { return !IsNull(m.Nodes[key]) }

// Node is key's value, nil when absent or null.
func (m *Map) Node(key string) *yaml.Node { return Resolve(m.Nodes[key]) }

// Sub is the member path of key.
func (m *Map) Sub(key string) string { return Member(m.Member, key) }

// KeyLine is the line of key, or the mapping's when key is absent.
func (m *Map) KeyLine(key string) int {
	if l, ok := m.keyLines[key]; ok {
		return l
	}
	return m.Line
}

// At is the member path and line of key.
func (m *Map) At(key string) (string, int) { return m.Sub(key), m.KeyLine(key) }

// Fail records a problem at key.
func (m *Map) Fail(key, format string, args ...any) {
	m.File.Add(m.KeyLine(key), m.Sub(key), format, args...)
}

// Required reports whether key Has a value, recording "is required" when not.
func (m *Map) Required(key string) bool {
	if m.Has(key) {
		return true
	}
	m.Fail(key, "is required")
	return false
}

// Child opens key's value as a closed mapping with the allowed keys (none when allowed is
// empty); an absent key is an empty mapping located at the key's line.
func (m *Map) Child(key string, allowed ...string) *Map {
	if allowed == nil {
		allowed = []string{}
	}
	return m.File.Map(m.Nodes[key], m.Sub(key), m.KeyLine(key), allowed)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
