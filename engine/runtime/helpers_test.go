package runtime

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Secret values written by setup. Tests assert none of them ever shows in an error.
const (
	auditKeyValue    = "audit-key-0123456789-abcdefghijklmnop-XYZ"
	smsTokenValue    = "sms-token-value-7f3a9c"
	smsCallbackValue = "sms-callback-hmac-secret-b81d"
	pathTokenValue   = "path-token-AbCdEf0123456789xyz"
	webhookValue     = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	smtpUserValue    = "relay-user"
	smtpPassValue    = "relay-password-c0ffee"
	peerKeyValue     = "peer-identity-key-bytes-0001"
	databaseURLValue = "postgres://sb:db-password-9911@db.example/switchboard"
)

// bundle is what a runtime test needs: a folder with a package root, a secrets folder
// holding mode-0600 secret files, and the environment the test injects.
type bundle struct {
	dir     string
	secrets string
	env     map[string]string
	dkimPEM string
}

// setup creates the bundle in a fresh temporary folder.
func setup(t *testing.T) *bundle {
	t.Helper()
	dir := t.TempDir()
	b := &bundle{dir: dir, secrets: filepath.Join(dir, "secrets"), env: map[string]string{}}
	mustMkdir(t, filepath.Join(dir, "package"))
	mustMkdir(t, b.secrets)
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	b.dkimPEM = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	for name, value := range map[string]string{
		"audit.key":     auditKeyValue,
		"sms-token":     smsTokenValue,
		"sms-callback":  smsCallbackValue,
		"path-token":    pathTokenValue,
		"webhook":       webhookValue,
		"smtp-user":     smtpUserValue,
		"smtp-password": smtpPassValue,
		"peer.key":      peerKeyValue,
		"dkim.pem":      b.dkimPEM,
	} {
		b.secret(t, name, value, 0o600)
	}
	return b
}

// secret writes one secret file with an exact mode.
func (b *bundle) secret(t *testing.T, name, value string, mode os.FileMode) string {
	t.Helper()
	p := filepath.Join(b.secrets, name)
	if err := os.WriteFile(p, []byte(value), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

// getenv returns the bundle's environment as a getenv function.
func (b *bundle) getenv(name string) string { return b.env[name] }

// write writes the runtime file and returns its path.
func (b *bundle) write(t *testing.T, doc string) string {
	t.Helper()
	p := filepath.Join(b.dir, "runtime.yaml")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// load writes doc and loads it.
func (b *bundle) load(t *testing.T, doc string) (*Runtime, error) {
	t.Helper()
	return Load(b.write(t, doc), b.getenv)
}

// mustLoad loads doc and fails the test on any error.
func (b *bundle) mustLoad(t *testing.T, doc string) *Runtime {
	t.Helper()
	rt, err := b.load(t, doc)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return rt
}

func mustMkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatal(err)
	}
}

// sections of a minimal valid runtime file, in document order; doc overrides them.
var sectionOrder = []string{"apiVersion", "kind", "package", "listen", "database", "secrets",
	"authentication", "providers", "dispatch", "audit", "retention", "sandbox", "publicUrl"}

var minimalSections = map[string]string{
	"apiVersion":     "apiVersion: switchboard/v1",
	"kind":           "kind: Runtime",
	"package":        "package: {root: ./package}",
	"database":       "database: {driver: sqlite, path: ./data/switchboard.db}",
	"secrets":        "secrets: {file: {root: ./secrets}, env: {}}",
	"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: switchboard, jwksUri: "https://id.example/jwks.json", allowedClients: [case-system]}}`,
	"audit":          `audit: {keyRef: "secret:file/audit.key"}`,
}

// doc builds a runtime file from the minimal sections, replaced by overrides (an empty
// override removes the section).
func doc(overrides map[string]string) string {
	var lines []string
	for _, s := range sectionOrder {
		text, ok := overrides[s]
		if !ok {
			text = minimalSections[s]
		}
		if text != "" {
			lines = append(lines, strings.TrimRight(text, "\n"))
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

// diagsOf returns err's diagnostics, failing when err is not a *LoadError.
func diagsOf(t *testing.T, err error) []Diagnostic {
	t.Helper()
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("want *LoadError, got %T: %v", err, err)
	}
	return le.Diagnostics
}

// requireDiag fails unless err holds a diagnostic with code and member, and returns it.
func requireDiag(t *testing.T, err error, code, member string) Diagnostic {
	t.Helper()
	if err == nil {
		t.Fatalf("want a diagnostic %s at %s, got no error", code, member)
	}
	for _, d := range diagsOf(t, err) {
		if d.Code == code && d.Member == member {
			return d
		}
	}
	t.Fatalf("want a diagnostic %s at %s, got:\n%v", code, member, err)
	return Diagnostic{}
}

// writeCA writes a self-signed CA certificate as ca.pem into dir and returns its path.
func writeCA(t *testing.T, dir string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "test CA"},
		NotBefore:             time.Unix(0, 0),
		NotAfter:              time.Unix(1<<33, 0),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
