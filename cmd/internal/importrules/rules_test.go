package importrules

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// moduleRoot is the folder of the repository's go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == "/dev/null" {
		t.Fatal("the test does not run inside the module")
	}
	return filepath.Dir(gomod)
}

func TestRepositoryKeepsItsImportRules(t *testing.T) {
	t.Parallel()
	pkgs, err := List(moduleRoot(t), "./...")
	if err != nil {
		t.Fatal(err)
	}
	paths := make([]string, 0, len(pkgs))
	for _, p := range pkgs {
		paths = append(paths, p.ImportPath)
	}
	for _, want := range []string{"switchboard/engine", "switchboard/scripting", "switchboard/providers/peer",
		"switchboard/store", "switchboard/packages", "switchboard/cmd/switchboard"} {
		if !slices.Contains(paths, want) {
			t.Fatalf("go list did not list %s (it listed %d packages): the check would prove nothing", want, len(pkgs))
		}
	}
	for _, v := range Check(pkgs) {
		t.Errorf("%s (docs/architecture.md, Import rules)", v)
	}
}

// TestCheckerCatchesViolationsInARealModule runs the checker through go list on a small
// module under testdata that breaks the rules on purpose.
func TestCheckerCatchesViolationsInARealModule(t *testing.T) {
	t.Parallel()
	pkgs, err := List(filepath.Join("testdata", "violations"), "./...")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range Check(pkgs) {
		got = append(got, v.Package+" -> "+v.Import)
	}
	want := []string{
		"switchboard/engine -> switchboard/store",
		"switchboard/packages -> switchboard/engine",
		"switchboard/providers/smtp -> switchboard/providers/httpgw",
		"switchboard/providers/smtp -> switchboard/scripting",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("violations:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestCheckerRules(t *testing.T) {
	t.Parallel()
	std := Package{ImportPath: "switchboard/providers/httpgw/mockgw", Imports: []string{"net/http"}}
	for _, tc := range []struct {
		name string
		pkg  Package
		bad  []string // the imports that must be reported
	}{
		{"the engine imports the packages loader, its own parts and small libraries",
			Package{ImportPath: "switchboard/engine/api", Imports: []string{"context", "switchboard/engine",
				"switchboard/packages", "golang.org/x/time/rate", "github.com/google/uuid"}}, nil},
		{"the engine never imports a store, a provider, scripting or cmd",
			Package{ImportPath: "switchboard/engine", Imports: []string{"switchboard/store",
				"switchboard/providers/smtp", "switchboard/scripting", "switchboard/cmd/switchboard"}},
			[]string{"switchboard/store", "switchboard/providers/smtp", "switchboard/scripting", "switchboard/cmd/switchboard"}},
		{"the engine's in-package tests follow the engine's rule",
			Package{ImportPath: "switchboard/engine", TestImports: []string{"switchboard/store"}}, []string{"switchboard/store"}},
		{"the engine's external tests are clients and may use a real store",
			Package{ImportPath: "switchboard/engine", XTestImports: []string{"switchboard/store", "switchboard/engine"}}, nil},
		{"the engine takes no heavy library",
			Package{ImportPath: "switchboard/engine", Imports: []string{"github.com/jackc/pgx/v5", "github.com/google/uuidx"}},
			[]string{"github.com/jackc/pgx/v5", "github.com/google/uuidx"}},
		{"a leaf package may be imported by anyone",
			Package{ImportPath: "switchboard/engine", Imports: []string{"switchboard/providers/httpgw/mockgw"}}, nil},
		{"only scripting imports goja",
			Package{ImportPath: "switchboard/cmd/switchboard", Imports: []string{"github.com/dop251/goja"},
				XTestImports: []string{"github.com/dop251/goja_nodejs/require"}},
			[]string{"github.com/dop251/goja", "github.com/dop251/goja_nodejs/require"}},
		{"scripting imports goja and nothing of the module",
			Package{ImportPath: "switchboard/scripting", Imports: []string{"github.com/dop251/goja/ast", "switchboard/engine",
				"go.yaml.in/yaml/v3"}},
			[]string{"switchboard/engine", "go.yaml.in/yaml/v3"}},
		{"only the peer provider imports libp2p",
			Package{ImportPath: "switchboard/providers/httpgw", Imports: []string{"github.com/libp2p/go-libp2p",
				"github.com/multiformats/go-multiaddr"}},
			[]string{"github.com/libp2p/go-libp2p", "github.com/multiformats/go-multiaddr"}},
		{"the peer provider imports libp2p, scripting and the engine",
			Package{ImportPath: "switchboard/providers/peer", Imports: []string{"github.com/libp2p/go-libp2p/core/host",
				"switchboard/scripting", "switchboard/engine"}}, nil},
		{"a provider never imports another provider, a store, cmd, or scripting unless it runs adapters",
			Package{ImportPath: "switchboard/providers/smtp", Imports: []string{"switchboard/providers/httpgw",
				"switchboard/store", "switchboard/cmd/switchboard", "switchboard/scripting", "switchboard/providers/smtp/dkimkey"}},
			[]string{"switchboard/providers/httpgw", "switchboard/store", "switchboard/cmd/switchboard", "switchboard/scripting"}},
		{"a new provider gets the providers' rule",
			Package{ImportPath: "switchboard/providers/chat/internal/x", Imports: []string{"switchboard/providers/chat",
				"switchboard/providers/smtp", "switchboard/engine", "switchboard/providers/providertest"}},
			[]string{"switchboard/providers/smtp"}},
		{"the store imports the engine's types, never a provider or engine/api",
			Package{ImportPath: "switchboard/store/storetest", Imports: []string{"switchboard/engine", "switchboard/engine/enginetest",
				"switchboard/store", "switchboard/providers/peer", "switchboard/engine/api", "github.com/jackc/pgx/v5"}},
			[]string{"switchboard/providers/peer", "switchboard/engine/api"}},
		{"packages imports the standard library and schema and YAML libraries only",
			Package{ImportPath: "switchboard/packages", Imports: []string{"github.com/santhosh-tekuri/jsonschema/v6/kind",
				"go.yaml.in/yaml/v3/parse", "switchboard/engine", "github.com/google/uuid"}},
			[]string{"switchboard/engine", "github.com/google/uuid"}},
		{"cmd wires everything but goja and libp2p",
			Package{ImportPath: "switchboard/cmd/switchboard", Imports: []string{"switchboard/store", "switchboard/providers/peer",
				"switchboard/scripting", "github.com/spf13/cobra"}}, nil},
		{"a folder no rule covers is reported",
			Package{ImportPath: "switchboard/tools/gen", Imports: []string{"fmt"}}, []string{"-"}},
	} {
		var got []string
		for _, v := range Check([]Package{tc.pkg, std}) {
			got = append(got, v.Import)
		}
		want := slices.Clone(tc.bad)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: reported %v, want %v", tc.name, got, want)
		}
	}
}
