package importrules

// Module is the repository's module path.
const Module = "switchboard"

// Rule says what the packages of one area may import.
type Rule struct {
	// Area is a module-relative folder: the rule covers its packages and those of its
	// subfolders. "providers/*" makes each first-level subfolder an area of its own (so one
	// provider is not another). The longest matching Area covers a package.
	Area string
	// Internal lists the module packages the area may import besides its own: "engine" is that
	// one package, "engine/..." the folder and everything under it, "..." the whole module.
	Internal []string
	// External lists the third-party import path prefixes the area may import, unless
	// AnyExternal allows every one. Exclusives still apply either way.
	External    []string
	AnyExternal bool
}

// Exclusive gives one area alone the third-party packages under Prefix.
type Exclusive struct {
	Prefix string
	Area   string
}

// Rules is the one table of what may import what; docs/architecture.md ("Import rules") says
// why. A package that imports only the standard library is a leaf: any package may import it,
// wherever it lives, so that one job is written once.
var Rules = []Rule{
	{Area: "engine", Internal: []string{"engine/...", "packages/..."}, External: []string{
		"github.com/google/uuid", "golang.org/x/time/", "github.com/go-jose/go-jose/v4", "go.yaml.in/yaml/v3",
	}},
	{Area: "scripting", External: []string{"github.com/dop251/goja", "github.com/dlclark/regexp2"}},
	{Area: "providers/*", Internal: providerImports, AnyExternal: true},
	// The adapters of http providers and of peer providers run in the scripting sandbox.
	{Area: "providers/httpgw", Internal: append([]string{"scripting"}, providerImports...), AnyExternal: true},
	{Area: "providers/peer", Internal: append([]string{"scripting"}, providerImports...), AnyExternal: true},
	{Area: "store", Internal: []string{"engine", "engine/enginetest"}, AnyExternal: true},
	{Area: "packages", External: []string{"github.com/santhosh-tekuri/jsonschema/v6", "go.yaml.in/yaml/v3"}},
	{Area: "cmd", Internal: []string{"..."}, AnyExternal: true},
	{Area: "examples", Internal: []string{"..."}, AnyExternal: true},
}

// providerImports is what every provider may import of the module: the engine's types, its
// test helpers, and the suite every provider passes.
var providerImports = []string{"engine", "engine/enginetest", "providers/providertest"}

// Exclusives keeps the heavy engines behind one package each: goja (and regexp2, the regular
// expression engine goja runs, whose match timeout the sandbox sets) behind scripting, libp2p
// (and its multiformats) behind the peer provider.
var Exclusives = []Exclusive{
	{Prefix: "github.com/dop251/goja", Area: "scripting"},
	{Prefix: "github.com/dlclark/regexp2", Area: "scripting"},
	{Prefix: "github.com/libp2p/", Area: "providers/peer"},
	{Prefix: "github.com/multiformats/", Area: "providers/peer"},
}
