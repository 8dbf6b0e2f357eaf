package adapters_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
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
	if err != nil || len(matches) < 16 {
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
		t.Skip("runs without -update: TestGoldenCases rewrites the cases")
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
		Authentication struct {
			Kind              string `yaml:"kind"`
			ServiceAccountRef string `yaml:"serviceAccountRef"`
			KeyRef            string `yaml:"keyRef"`
		} `yaml:"authentication"`
		CallbackVerifier struct {
			Kind         string `yaml:"kind"`
			SecretRef    string `yaml:"secretRef"`
			PublicKeyRef string `yaml:"publicKeyRef"`
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
	edKey, _, err := ed25519.GenerateKey(rand.Reader)
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
			write(t, filepath.Join(pkgDir, "switchboard.yaml"), manifest(id, firstCase(t, dir)), 0o644)
			for _, name := range []string{"provider.yaml", "adapter.js"} {
				data, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil {
					t.Fatal(err)
				}
				write(t, filepath.Join(pkgDir, "providers", id, name), string(data), 0o644)
			}
			verifier, auth := refs.Providers[id].CallbackVerifier, refs.Providers[id].Authentication
			first := firstCase(t, dir)
			write(t, filepath.Join(root, "secrets", "audit.key"), "audit-key-0123456789-abcdefghijklmnop", 0o600)
			for _, m := range fileRef.FindAllStringSubmatch(string(snippet), -1) {
				value := "test-value-of-" + m[1]
				switch {
				case verifier.Kind == "standard-webhooks" && verifier.SecretRef == m[0]:
					value = "whsec_" + base64.StdEncoding.EncodeToString([]byte("a webhook secret of 32 bytes...."))
				case verifier.Kind == "ed25519" && verifier.PublicKeyRef == m[0]:
					value = base64.StdEncoding.EncodeToString(edKey)
				case auth.Kind == "google-service-account" && auth.ServiceAccountRef == m[0]:
					value = serviceAccountKey(t)
				case auth.Kind == "apns-token" && auth.KeyRef == m[0]:
					value = pkcs8PEM(t, key)
				}
				write(t, filepath.Join(root, "secrets", m[1]), value, 0o600)
			}
			// The environment: what the adapter's cases give (setup.yaml env), else stand-ins.
			env := map[string]string{}
			for _, m := range envRef.FindAllStringSubmatch(string(snippet), -1) {
				env[m[1]] = "AC0123456789abcdef0123456789abcdef"
				if strings.Contains(m[1], "PUBLIC_KEY") {
					env[m[1]] = base64.StdEncoding.EncodeToString(der)
				}
				if v, ok := first.setup.Env[m[1]]; ok {
					env[m[1]] = v
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

// caseSetup is what the load test reads of an adapter's first golden case: the sender profile
// the adapter is written for and the setup (the environment, idempotentSubmit).
type caseSetup struct {
	profile struct {
		Channel         string `yaml:"channel"`
		Sender          string `yaml:"sender"`
		MaximumSegments int    `yaml:"maximumSegments"`
	}
	setup struct {
		Env              map[string]string `yaml:"env"`
		IdempotentSubmit bool              `yaml:"idempotentSubmit"`
	}
}

// firstCase reads message.yaml and setup.yaml of the adapter's first golden case (in name
// order) that has a message.
func firstCase(t *testing.T, dir string) caseSetup {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "testdata", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no golden cases (%v)", dir, err)
	}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var c caseSetup
		found := false
		for _, f := range ar.Files {
			switch f.Name {
			case "message.yaml":
				var m struct {
					Profile yaml.Node `yaml:"profile"`
				}
				if err := yaml.Unmarshal(f.Data, &m); err != nil {
					t.Fatalf("%s: message.yaml: %v", file, err)
				}
				if err := m.Profile.Decode(&c.profile); err != nil {
					t.Fatalf("%s: message.yaml profile: %v", file, err)
				}
				found = true
			case "setup.yaml":
				if err := yaml.Unmarshal(f.Data, &c.setup); err != nil {
					t.Fatalf("%s: setup.yaml: %v", file, err)
				}
			}
		}
		if found {
			return c
		}
	}
	t.Fatalf("%s: no golden case has message.yaml", dir)
	return caseSetup{}
}

// manifest is a package that declares the adapter's provider with a sender profile using it,
// of the channel and sender of the adapter's golden cases (idempotentSubmit as they set it).
func manifest(id string, c caseSetup) string {
	sender := ", sender: " + strconv.Quote(c.profile.Sender)
	switch {
	case c.profile.Channel == "sms":
		sender += ", maximumSegments: " + strconv.Itoa(max(c.profile.MaximumSegments, 1))
	case c.profile.Sender == "":
		sender = "" // a chat profile without a sender leaves it out
	}
	return `apiVersion: switchboard/v1
kind: Package
providers:
  - {id: ` + id + `, kind: http, idempotentSubmit: ` + strconv.FormatBool(c.setup.IdempotentSubmit) + `}
senderProfiles:
  - {id: notices, channel: ` + c.profile.Channel + `, provider: ` + id + sender + `}
templates: []
accessProfiles:
  - {id: operations, role: operator, clients: [case-system], requiredScopes: [messaging:operate], requestsPerMinute: 60, burst: 10}
`
}

// pkcs8PEM is key as a PEM PKCS #8 private key (an APNs .p8 file is one of a P-256 key).
func pkcs8PEM(t *testing.T, key any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

// serviceAccountKey is a Google service account's JSON key with a fresh RSA key.
func serviceAccountKey(t *testing.T) string {
	t.Helper()
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]string{"type": "service_account", "client_email": "push@example.iam.gserviceaccount.com",
		"private_key": pkcs8PEM(t, rk), "token_uri": "https://oauth2.googleapis.com/token"})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
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

// TestQuickstartCarriesTheBundledPushAdapters: the quickstart's fcm and apns providers are these
// folders' adapters, byte for byte, so that `switchboard dev` shows the bundled adapters at work.
func TestQuickstartCarriesTheBundledPushAdapters(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"fcm", "apns"} {
		for _, file := range []string{"adapter.js", "provider.yaml", "runtime-snippet.yaml"} {
			want, err := os.ReadFile(filepath.Join(name, file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join("..", "quickstart", "providers", name, file))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("examples/quickstart/providers/%s/%s differs from examples/adapters/%s/%s (%v): copy it again", name, file, name, file, err)
			}
		}
	}
}
