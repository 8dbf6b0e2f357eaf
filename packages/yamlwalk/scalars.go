package yamlwalk

import (
	"math"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// Scalar is key's value as text, after the file's Expand. ok is false when key is absent or
// null, not a scalar (recorded) or fails expansion (recorded); expanded reports a
// substitution, after which numbers and booleans are read from the text.
func (m *Map) Scalar(key string) (text string, n *yaml.Node, expanded, ok bool) {
	n = m.Node(key)
	if n == nil {
		return "", nil, false, false
	}
	if n.Kind != yaml.ScalarNode {
		m.Fail(key, "must be a single value, not a list or mapping")
		return "", nil, false, false
	}
	return m.expand(key, n)
}

func (m *Map) expand(key string, n *yaml.Node) (string, *yaml.Node, bool, bool) {
	if m.File.Expand == nil {
		return n.Value, n, false, true
	}
	text, expanded, err := m.File.Expand(n.Value)
	if err != nil {
		m.Fail(key, "%s", err.Error())
		return "", nil, expanded, false
	}
	return text, n, expanded, true
}

// Text is key's value as text: any scalar, a number or a boolean included.
func (m *Map) Text(key string) (string, bool) {
	text, _, _, ok := m.Scalar(key)
	return text, ok
}

// RequiredText is key's text, recording "is required" when key is absent or null and "must
// not be empty" when the text is empty.
func (m *Map) RequiredText(key string) string {
	text, _, _, ok := m.Scalar(key)
	if ok && text == "" {
		m.Fail(key, "must not be empty")
	}
	if !ok && !m.Has(key) {
		m.Fail(key, "is required")
	}
	return text
}

// Str is key's value as a YAML string, so that 1 and "1" differ: a number, a boolean or any
// other tag is recorded ("quote it").
func (m *Map) Str(key string) (string, bool) {
	text, n, _, ok := m.Scalar(key)
	if ok && n.ShortTag() != "!!str" {
		m.File.Add(n.Line, m.Sub(key), "must be a string (quote it)")
		return "", false
	}
	return text, ok
}

// Int is key's value as an integer from lo to hi: a YAML integer, or decimal digits after a
// substitution.
func (m *Map) Int(key string, lo, hi int64) (int64, bool) {
	text, n, expanded, ok := m.Scalar(key)
	if !ok {
		return 0, false
	}
	var v int64
	var err error
	switch {
	case expanded:
		v, err = strconv.ParseInt(text, 10, 64)
	case n.ShortTag() == "!!int":
		err = n.Decode(&v)
	default:
		err = strconv.ErrSyntax
	}
	if err != nil || v < lo || v > hi {
		m.File.Add(n.Line, m.Sub(key), "must be an integer from %d to %d", lo, hi)
		return 0, false
	}
	return v, true
}

// Bool is key's value as a boolean: true or false, also after a substitution.
func (m *Map) Bool(key string) (bool, bool) {
	text, n, expanded, ok := m.Scalar(key)
	if !ok {
		return false, false
	}
	var v bool
	var err error
	switch {
	case expanded:
		v, err = strconv.ParseBool(text)
	case n.ShortTag() == "!!bool":
		err = n.Decode(&v)
	default:
		err = strconv.ErrSyntax
	}
	if err != nil {
		m.File.Add(n.Line, m.Sub(key), "must be true or false")
		return false, false
	}
	return v, true
}

// Float is key's value as a finite number: a YAML integer or float, or a number after a
// substitution.
func (m *Map) Float(key string) (float64, bool) {
	text, n, expanded, ok := m.Scalar(key)
	if !ok {
		return 0, false
	}
	var v float64
	var err error
	switch tag := n.ShortTag(); {
	case expanded:
		v, err = strconv.ParseFloat(text, 64)
	case tag == "!!float" || tag == "!!int":
		err = n.Decode(&v)
	default:
		err = strconv.ErrSyntax
	}
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		m.File.Add(n.Line, m.Sub(key), "must be a finite number")
		return 0, false
	}
	return v, true
}

// Seq is the items of key's list, aliases followed (a null item kept as its node, an item
// that cannot be followed nil); nil when key is absent, null or not a list (recorded).
func (m *Map) Seq(key string) []*yaml.Node {
	n := m.Node(key)
	if n == nil {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		m.Fail(key, "must be a list")
		return nil
	}
	items := make([]*yaml.Node, len(n.Content))
	for i, it := range n.Content {
		items[i] = follow(it)
	}
	return items
}

// Strings is key's list of YAML strings (see Str): each non-empty and listed once. Items that
// are not are recorded and left out.
func (m *Map) Strings(key string) []string { return m.list(key, true) }

// Texts is key's list of texts (see Text): each non-empty and listed once. Items that are not
// are recorded and left out.
func (m *Map) Texts(key string) []string { return m.list(key, false) }

func (m *Map) list(key string, typed bool) []string {
	items := m.Seq(key)
	out := make([]string, 0, len(items))
	for i, it := range items {
		member, line := Index(m.Sub(key), i), m.KeyLine(key)
		if it != nil {
			line = it.Line
		}
		if it == nil || it.Kind != yaml.ScalarNode || IsNull(it) || typed && it.ShortTag() != "!!str" {
			m.File.Add(line, member, "must be a string")
			continue
		}
		text := it.Value
		if m.File.Expand != nil {
			var err error
			if text, _, err = m.File.Expand(text); err != nil {
				m.File.Add(line, member, "%s", err.Error())
				continue
			}
		}
		switch {
		case text == "":
			m.File.Add(line, member, "must be a non-empty string")
		case contains(out, text):
			m.File.Add(line, member, "is listed twice")
		default:
			out = append(out, text)
		}
	}
	return out
}
