package adapters_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"switchboard/cmd/wiring"
	"switchboard/engine/runtime"
	"switchboard/packages"
	"switchboard/providers/httpgw/adaptertest"
)

var update = flag.Bool("update", false, "rewrite the expected sections of the golden cases")

// adapterDirs lists the adapter folders beside this file.
func adapterDirs(t *testing.T) []string {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join("*", "provider.yaml"))
	if err != nil || len(matches) != 4 {
		t.Fatalf("adapter folders: %v (%d found)", err, len(matches))
	}
	dirs := make([]string, len(matches))
	for i, m := range matches {
		dirs[i] = filepath.Dir(m)
	}
	return dirs
}

// TestGoldenCases runs every adapter's testdata/*.txtar, one subtest per file.
func TestGoldenCases(t *testing.T) {
	t.Parallel()
	for _, dir := range adapterDirs(t) {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			adaptertest.Run(t, dir, *update)
		})
	}
}

// TestRunDirOverAllAdapters runs the cases the way `switchboard adapter test examples/adapters`
// does: one folder holding every adapter.
func TestRunDirOverAllAdapters(t *testing.T) {
	t.Parallel()
	if *update {
		t.Skip("TestGoldenCases rewrites the cases")
	}
	files, err := filepath.Glob(filepath.Join("*", "testdata", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	passed, failed, err := adaptertest.RunDir(".", false, &out)
	if err != nil || failed != 0 || passed != len(files) {
		t.Fatalf("RunDir: passed %d of %d, failed %d, err %v\n%s", passed, len(files), failed, err, out.String())
	}
}

// snippetRefs is what the load test needs to know of a runtime snippet to provide its secrets.
type snippetRefs struct {
	Providers map[string]struct {
		CallbackVerifier struct {
			Kind      string `yaml:"kind"`
			SecretRef string `yaml:"secretRef"`
		} `yaml:"callbackVerifier"`
	} `yaml:"providers"`
}

var (
	fileRef = regexp.MustCompile(`secret:file/([A-Za-z0-9._-]+)`)
	envRef  = regexp.MustCompile(`(?:secret:env/|\$\{)([A-Za-z_][A-Za-z0-9_]*)`)
)

// TestAdaptersLoadAsServeWould puts each adapter in a package beside its runtime snippet and
// loads both the way serve does: the package loader, the runtime loader (which must accept the
// snippet's verifier kind), CheckPackage, and the provider built from the result.
func TestAdaptersLoadAsServeWould(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range adapterDirs(t) {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			snippet, err := os.ReadFile(filepath.Join(dir, "runtime-snippet.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var refs snippetRefs
			if err := yaml.Unmarshal(snippet, &refs); err != nil || len(refs.Providers) != 1 {
				t.Fatalf("runtime-snippet.yaml: %v (%d providers)", err, len(refs.Providers))
			}
			var id string
			for id = range refs.Providers {
			}
			root := t.TempDir()
			pkgDir := filepath.Join(root, "package")
			write(t, filepath.Join(pkgDir, "switchboard.yaml"), manifest(id), 0o644)
			for _, name := range []string{"provider.yaml", "adapter.js"} {
				data, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(pkgDir, "providers", id, name), string(data), 0o644)
			}
			verifier := refs.Providers[id].CallbackVerifier
			write(t, filepath.Join(root, "secrets", "audit.key"), "audit-key-0123456789-abcdefghijklmnop", 0o600)
			for _, m := range fileRef.FindAllStringSubmatch(string(snippet), -1) {
				value := "test-value-of-" + m[1]
				if verifier.Kind == "standard-webhooks" && verifier.SecretRef == m[0] {
					value = "whsec_" + base64.StdEncoding.EncodeToString([]byte("a webhook secret of 32 bytes...."))
				}
				write(t, filepath.Join(root, "secrets", m[1]), value, 0o600)
			}
			env := map[string]string{}
			for _, m := range envRef.FindAllStringSubmatch(string(snippet), -1) {
				env[m[1]] = "AC0123456789abcdef0123456789abcdef"
				if strings.Contains(m[1], "PUBLIC_KEY") {
					env[m[1]] = base64.StdEncoding.EncodeToString(der)
				}
			}
			doc := strings.Join([]string{
				"apiVersion: switchboard/v1", "kind: Runtime", "package: {root: ./package}",
				"database: {driver: sqlite, path: ./data/switchboard.db}",
				"secrets: {file: {root: ./secrets}, env: {}}",
				`authentication: {oidc: {issuer: "https://id.example", audience: switchboard, jwksUri: "https://id.example/jwks.json", allowedClients: [case-system]}}`,
				`audit: {keyRef: "secret:file/audit.key"}`,
				string(snippet),
			}, "\n")
			write(t, filepath.Join(root, "runtime.yaml"), doc, 0o600)

			pkg, err := packages.Load(pkgDir)
			if err != nil {
				t.Fatalf("package: %v", err)
			}
			rt, err := runtime.Load(filepath.Join(root, "runtime.yaml"), func(k string) string { return env[k] })
			if err != nil {
				t.Fatalf("runtime: %v", err)
			}
			if err := rt.CheckPackage(pkg); err != nil {
				t.Fatalf("CheckPackage: %v", err)
			}
			p, err := wiring.NewHTTP(rt, pkg.Provider(id), wiring.Options{})
			if err != nil {
				t.Fatalf("wiring.NewHTTP: %v", err)
			}
			_ = p.Close()
		})
	}
}

// manifest is a package that declares the adapter's provider with a sender profile using it:
// email for SendGrid, SMS for the others; idempotentSubmit for the Standard Webhooks gateway.
func manifest(id string) string {
	channel, sender, idempotent := "sms", `"+15550100", maximumSegments: 3`, "false"
	switch id {
	case "sendgrid":
		channel, sender = "email", "notices@example.org"
	case "standard-webhooks":
		idempotent = "true"
	}
	return `apiVersion: switchboard/v1
kind: Package
providers:
  - {id: ` + id + `, kind: http, idempotentSubmit: ` + idempotent + `}
senderProfiles:
  - {id: notices, channel: ` + channel + `, provider: ` + id + `, sender: ` + sender + `}
templates: []
accessProfiles:
  - {id: operations, role: operator, clients: [case-system], requiredScopes: [messaging:operate], requestsPerMinute: 60, burst: 10}
`
}

func write(t *testing.T, path, data string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}
