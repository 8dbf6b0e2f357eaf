package yamlwalk

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// File is one YAML file being walked: where its problems go and how its values are read.
type File struct {
	// Path names the file in diagnostics.
	Path string
	// Code is the code of the problems the walker finds (package.invalid, runtime.invalid…).
	Code string
	// Diags receives the problems.
	Diags *Diagnostics
	// Expand, when set, rewrites each scalar before it is read (the runtime file's ${VAR}
	// substitution). It reports whether it substituted anything, and its error message must
	// not hold a value.
	Expand func(string) (text string, substituted bool, err error)
}

// Add records a problem of the file at line and member.
func (f *File) Add(line int, member, format string, args ...any) {
	f.Diags.Add(f.Code, f.Path, line, member, format, args...)
}

// syntaxLine finds the line the YAML library names in its error messages.
var syntaxLine = regexp.MustCompile(`^yaml: line (\d+): `)

// Parse parses data as exactly one YAML document and returns its root node, or nil after
// recording why not (empty, not valid YAML, more than one document).
func (f *File) Parse(data []byte) (root *yaml.Node) {
	defer func() {
		// The YAML library reports errors by value and has panicked on hostile input in the
		// past; a file must never take the process down.
		if p := recover(); p != nil {
			f.Add(0, "", "the YAML parser failed on this file")
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			f.Add(0, "", "the file is empty")
		} else {
			f.syntaxError(err)
		}
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			f.syntaxError(err)
		} else {
			f.Add(extra.Line, "", "the file must hold exactly one YAML document")
		}
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		f.Add(0, "", "the file is empty")
		return nil
	}
	return doc.Content[0]
}

func (f *File) syntaxError(err error) {
	msg, line := err.Error(), 0
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimPrefix(msg, m[0])
	}
	f.Add(line, "", "not valid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
}

// maxAliases bounds how many aliases Resolve follows, so that a cycle cannot spin.
const maxAliases = 32

// Resolve follows aliases to the node they name; nil for a YAML null, and for an alias chain
// longer than the bound.
func Resolve(n *yaml.Node) *yaml.Node {
	n = follow(n)
	if IsNull(n) {
		return nil
	}
	return n
}

// follow follows aliases to the node they name, a null included; nil for an alias chain longer
// than the bound.
func follow(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxAliases; i++ {
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// IsNull reports whether n is absent or a YAML null.
func IsNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Member joins a parent member and a key into a dotted member.
func Member(parent, key string) string {
	if parent == "" {
		return key
	}
	return parent + "." + key
}

// Index is member's item i: member[i].
func Index(member string, i int) string { return member + "[" + strconv.Itoa(i) + "]" }
