package runtime

import (
	"errors"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"switchboard/packages/yamlwalk"
)

// maxRuntimeFileBytes bounds the runtime file; a real one is a few KiB.
const maxRuntimeFileBytes = 1 << 20

// topKeys are the members of the runtime document.
var topKeys = []string{"apiVersion", "kind", "package", "listen", "database", "secrets",
	"authentication", "providers", "dispatch", "audit", "retention", "sandbox", "console", "publicUrl", "webhooks"}

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
	rt.PublicURL = r.decodePublicURL(doc)
	rt.Database = r.decodeDatabase(doc)
	rt.Authentication = r.decodeAuthentication(doc)
	rt.Providers = r.decodeProviders(doc)
	rt.Dispatch = r.decodeDispatch(doc)
	rt.Audit = r.decodeAudit(doc)
	rt.Retention = r.decodeRetention(doc)
	rt.Sandbox = r.decodeSandbox(doc)
	rt.Console = r.decodeConsole(doc)
	rt.Webhooks = r.decodeWebhooks(doc)
	if err := d.err(); err != nil {
		return nil, err
	}
	return rt, nil
}

// parseYAML parses exactly one YAML document and returns its root node, or nil after
// recording why not.
func parseYAML(data []byte, d *diagnostics) *yaml.Node {
	f := &yamlwalk.File{Path: d.path, Code: CodeInvalid, Diags: &d.Diagnostics}
	root := f.Parse(data)
	if root == nil {
		return nil
	}
	if n := deref(root); n == nil || n.Kind != yaml.MappingNode {
		d.add(CodeInvalid, root.Line, "", "the runtime file must be a YAML mapping")
		return nil
	}
	return root
}
