package runtime

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxRuntimeFileBytes bounds the runtime file; a real one is a few KiB.
const maxRuntimeFileBytes = 1 << 20

// topKeys are the members of the runtime document.
var topKeys = []string{"apiVersion", "kind", "package", "listen", "database", "secrets",
	"authentication", "providers", "dispatch", "audit", "retention", "sandbox", "console"}

// Load reads, substitutes, decodes and validates the runtime file at path and resolves every
// secret it references. getenv is os.Getenv in production (injected for tests); nil means an
// empty environment.
//
// On any problem Load returns a nil *Runtime and a *LoadError holding every diagnostic it
// found (ExitCode maps it to 1 or 3). No diagnostic ever contains a value from the file, the
// environment or a secret.
func Load(path string, getenv func(string) string) (*Runtime, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	data, err := readLimited(abs, maxRuntimeFileBytes)
	if err != nil {
		d := &diagnostics{path: abs}
		code := CodeUnreadable
		if errors.Is(err, errFileTooLarge) {
			code = CodeInvalid
		}
		d.add(code, 0, "", "cannot read the runtime file: %v", err)
		return nil, d.err()
	}
	return parse(abs, data, getenv)
}

// parse decodes and validates the bytes of the runtime file at the absolute path abs.
func parse(abs string, data []byte, getenv func(string) string) (*Runtime, error) {
	d := &diagnostics{path: abs}
	root := parseYAML(data, d)
	if root == nil {
		return nil, d.err()
	}
	r := &reader{dir: filepath.Dir(abs), getenv: getenv, diags: d, lines: map[string]int{}}
	doc := r.open(root, "", 1, topKeys)
	rt := &Runtime{Path: abs, Dir: r.dir, lines: r.lines}
	r.decodeEnvelope(doc)
	r.secrets = r.decodeSecrets(doc)
	rt.Package = r.decodePackage(doc)
	rt.Listen = r.decodeListen(doc)
	rt.Database = r.decodeDatabase(doc)
	rt.Authentication = r.decodeAuthentication(doc)
	rt.Providers = r.decodeProviders(doc)
	rt.Dispatch = r.decodeDispatch(doc)
	rt.Audit = r.decodeAudit(doc)
	rt.Retention = r.decodeRetention(doc)
	rt.Sandbox = r.decodeSandbox(doc)
	rt.Console = r.decodeConsole(doc)
	if err := d.err(); err != nil {
		return nil, err
	}
	return rt, nil
}

// yamlLine finds the line the YAML library names in its error messages.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// parseYAML parses exactly one YAML document and returns its root node, or nil after
// recording why not.
func parseYAML(data []byte, d *diagnostics) (root *yaml.Node) {
	defer func() {
		// The YAML library reports errors by value; a panic would be its bug. Refuse the
		// file rather than crash the process that loads it.
		if p := recover(); p != nil {
			d.add(CodeInvalid, 0, "", "the YAML parser failed on this file")
			root = nil
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.add(CodeInvalid, 0, "", "the runtime file is empty")
			return nil
		}
		msg, line := err.Error(), 0
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = strings.TrimPrefix(msg, m[0])
		}
		d.add(CodeInvalid, line, "", "not valid YAML: %s", strings.TrimPrefix(msg, "yaml: "))
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		d.add(CodeInvalid, extra.Line, "", "the runtime file must hold exactly one YAML document")
		return nil
	}
	root = &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if n := deref(root); n == nil || n.Kind != yaml.MappingNode {
		d.add(CodeInvalid, root.Line, "", "the runtime file must be a YAML mapping")
		return nil
	}
	return root
}
