package auth

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// DevIssuer is a local token issuer for `switchboard dev`, `dev token`, `bench` and tests: an
// Ed25519 key (EdDSA) whose public half the verifier reads as a JWK Set (Config.JWKSFile). Its key
// id is the key's RFC 7638 thumbprint, so a loaded key keeps the kid it was written with. It is
// safe for concurrent use.
type DevIssuer struct {
	iss, aud string
	key      ed25519.PrivateKey
	kid      string
}

// NewDevIssuer makes a fresh Ed25519 signing key for issuer URL iss and audience aud.
func NewDevIssuer(iss, aud string) (*DevIssuer, error) {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("auth: generate dev issuer key: %w", err)
	}
	return newDevIssuer(iss, aud, key)
}

// LoadDevIssuer loads a key written by WriteFiles (a PKCS #8 "PRIVATE KEY" PEM block holding an
// Ed25519 key) for issuer iss and audience aud.
func LoadDevIssuer(keyPath, iss, aud string) (*DevIssuer, error) {
	data, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("auth: read dev issuer key: %w", err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("auth: dev issuer key %s: no PRIVATE KEY PEM block", keyPath)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("auth: dev issuer key %s: %w", keyPath, err)
	}
	key, ok := parsed.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("auth: dev issuer key %s: %T is not an Ed25519 key", keyPath, parsed)
	}
	return newDevIssuer(iss, aud, key)
}

func newDevIssuer(iss, aud string, key ed25519.PrivateKey) (*DevIssuer, error) {
	if iss == "" || aud == "" {
		return nil, errors.New("auth: a dev issuer needs an issuer and an audience")
	}
	jwk := jose.JSONWebKey{Key: key.Public()}
	thumb, err := jwk.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("auth: dev issuer key thumbprint: %w", err)
	}
	return &DevIssuer{iss: iss, aud: aud, key: key, kid: base64.RawURLEncoding.EncodeToString(thumb)}, nil
}

// Issuer returns the iss of minted tokens.
func (d *DevIssuer) Issuer() string { return d.iss }

// Audience returns the aud of minted tokens.
func (d *DevIssuer) Audience() string { return d.aud }

// KeyID returns the kid of minted tokens and of the JWK Set's one key.
func (d *DevIssuer) KeyID() string { return d.kid }

// JWKS returns the public JWK Set document: one OKP Ed25519 key with kid, alg EdDSA and use sig.
func (d *DevIssuer) JWKS() []byte {
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
		Key: d.key.Public(), KeyID: d.kid, Algorithm: string(jose.EdDSA), Use: "sig",
	}}}
	b, err := json.Marshal(set)
	if err != nil {
		// An Ed25519 public key always marshals.
		panic(fmt.Sprintf("auth: marshal dev JWKS: %v", err))
	}
	return b
}

// WriteFiles writes the private key (PKCS #8 PEM) to keyPath and the public JWK Set to jwksPath,
// both with mode 0600, creating missing parent folders with mode 0700. Each file is replaced
// atomically (written beside it, then renamed).
func (d *DevIssuer) WriteFiles(keyPath, jwksPath string) error {
	der, err := x509.MarshalPKCS8PrivateKey(d.key)
	if err != nil {
		return fmt.Errorf("auth: encode dev issuer key: %w", err)
	}
	if err := writeFile0600(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})); err != nil {
		return err
	}
	return writeFile0600(jwksPath, d.JWKS())
}

func writeFile0600(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("auth: create %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // fails harmlessly once renamed
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("auth: write %s: %w", path, err)
	}
	return nil
}

// Mint signs an at+jwt access token (EdDSA, kid of the key) for client: iss and aud of the
// issuer, sub and client_id = client, scope = the scopes space-separated (left out when there are
// none), iat and nbf now, exp now+ttl, and a random jti. ttl must be positive.
func (d *DevIssuer) Mint(client string, scopes []string, ttl time.Duration, now time.Time) (string, error) {
	if client == "" {
		return "", errors.New("auth: mint: a client is required")
	}
	if ttl <= 0 {
		return "", errors.New("auth: mint: ttl must be positive")
	}
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", fmt.Errorf("auth: mint: %w", err)
	}
	claims := map[string]any{
		"iss":       d.iss,
		"aud":       d.aud,
		"sub":       client,
		"client_id": client,
		"iat":       now.Unix(),
		"nbf":       now.Unix(),
		"exp":       now.Add(ttl).Unix(),
		"jti":       hex.EncodeToString(jti[:]),
	}
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: jose.EdDSA, Key: jose.JSONWebKey{Key: d.key, KeyID: d.kid}},
		(&jose.SignerOptions{}).WithType("at+jwt"),
	)
	if err != nil {
		return "", fmt.Errorf("auth: mint: %w", err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("auth: mint: %w", err)
	}
	return tok, nil
}
