// Package packages loads and validates a Switchboard package (SPEC section 3): the manifest
// switchboard.yaml, templates with their JSON Schemas and Go templates, and the provider.yaml and
// adapter.js of http providers. It renders templates, counts SMS segments, computes the package
// digest and writes the starter package for `switchboard init`.
//
// Load collects every problem of a package into a *LoadError of Diagnostics (code, path, line,
// member, message); a loaded Package is immutable and safe for concurrent use. On the submission
// path the engine calls DataOf, Template.ValidateData, Template.Render and CheckSegments; their
// errors carry a Code() and a caller-safe message that never echoes submitted values (a data
// member name only when it is a plain identifier, docs/api.md).
//
// Two leaf packages live under it for every package to use: jsonread, the one JSON reader, and
// yamlwalk, the one closed-YAML walker with the Diagnostic and LoadError types of package and
// runtime file problems alike.
//
// Template rules beyond SPEC 3.2, decided here:
//   - A part file's one final line break is not part of the text.
//   - {{.x}} refuses a missing key (missingkey=error) and a null, object or list value. A field
//     chain read by default, not, and, or, or tested by if/with yields null when a key is absent,
//     so {{default "x" .maybe}} and {{if .maybe}} work for optional data (tree.go).
//   - Besides date, number, upper, lower and default, a json function encodes a value as JSON,
//     which peer bodies of type application/json need; such bodies must render to valid JSON.
//
// It imports the standard library and schema/yaml libraries only. It must never import engine,
// store, providers, scripting (it loads and size-checks adapter scripts but never runs them),
// goja or libp2p.
package packages
