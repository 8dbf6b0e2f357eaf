package authtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// Algorithms the engine's verifier accepts, as JWS "alg" values.
const (
	RS256 = "RS256"
	ES256 = "ES256"
	EdDSA = "EdDSA"
)

// Key is a private signing key with the key id and algorithm it signs under. It is safe for
// concurrent use.
type Key struct {
	// KID is the "kid" put in token headers and in the key's JWK.
	KID string
	// Alg is the JWS algorithm: RS256, ES256 or EdDSA.
	Alg    string
	signer crypto.Signer
}

// NewKey generates a fresh key for alg (RS256: RSA 2048; ES256: P-256; EdDSA: Ed25519) under
// key id kid.
func NewKey(alg, kid string) (*Key, error) {
	var (
		s   crypto.Signer
		err error
	)
	switch alg {
	case RS256:
		s, err = rsa.GenerateKey(rand.Reader, 2048)
	case ES256:
		s, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case EdDSA:
		_, s, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, fmt.Errorf("authtest: unsupported algorithm %q", alg)
	}
	if err != nil {
		return nil, fmt.Errorf("authtest: generate %s key: %w", alg, err)
	}
	return &Key{KID: kid, Alg: alg, signer: s}, nil
}

// MustKey is NewKey that fails the test on error.
func MustKey(t testing.TB, alg, kid string) *Key {
	t.Helper()
	k, err := NewKey(alg, kid)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// Public returns the public key.
func (k *Key) Public() crypto.PublicKey { return k.signer.Public() }

// JWK returns the public key as a JSON Web Key with kid, alg and use "sig".
func (k *Key) JWK() jose.JSONWebKey {
	return jose.JSONWebKey{Key: k.signer.Public(), KeyID: k.KID, Algorithm: k.Alg, Use: "sig"}
}

// WithKID returns a copy of the key that signs under another key id (same key material), for
// tokens whose kid the JWKS does not know.
func (k *Key) WithKID(kid string) *Key { return &Key{KID: kid, Alg: k.Alg, signer: k.signer} }

// JWKS returns a JWK Set document holding the public keys.
func JWKS(keys ...*Key) []byte {
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(keys))}
	for _, k := range keys {
		set.Keys = append(set.Keys, k.JWK())
	}
	b, err := json.Marshal(set)
	if err != nil {
		// Marshalling a public key of a supported type cannot fail.
		panic(fmt.Sprintf("authtest: marshal JWKS: %v", err))
	}
	return b
}

// Claims returns a valid claim set for an access token: iss, aud, sub = client, client_id =
// client, scope (space-separated; left out when scopes is empty), iat and nbf now, exp now+ttl
// and a jti. Change or delete members to forge bad tokens.
func Claims(iss, aud, client string, scopes []string, now time.Time, ttl time.Duration) map[string]any {
	c := map[string]any{
		"iss":       iss,
		"aud":       aud,
		"sub":       client,
		"client_id": client,
		"iat":       now.Unix(),
		"nbf":       now.Unix(),
		"exp":       now.Add(ttl).Unix(),
		"jti":       fmt.Sprintf("jti-%d", now.UnixNano()),
	}
	if len(scopes) > 0 {
		s := scopes[0]
		for _, v := range scopes[1:] {
			s += " " + v
		}
		c["scope"] = s
	}
	return c
}

// MintWith signs claims into a compact JWS. The header starts as {"alg": k.Alg, "typ": "at+jwt",
// "kid": k.KID}; each member of header replaces it, and a nil value removes it. The signature is
// always made with the key's own algorithm, whatever "alg" the header claims.
func (k *Key) MintWith(claims map[string]any, header map[string]any) (string, error) {
	h := map[string]any{"alg": k.Alg, "typ": "at+jwt", "kid": k.KID}
	for name, v := range header {
		if v == nil {
			delete(h, name)
			continue
		}
		h[name] = v
	}
	input, err := signingInput(h, claims)
	if err != nil {
		return "", err
	}
	sig, err := k.sign([]byte(input))
	if err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// MustMint is MintWith that fails the test on error.
func (k *Key) MustMint(t testing.TB, claims map[string]any, header map[string]any) string {
	t.Helper()
	tok, err := k.MintWith(claims, header)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func (k *Key) sign(input []byte) ([]byte, error) {
	switch s := k.signer.(type) {
	case ed25519.PrivateKey:
		return ed25519.Sign(s, input), nil
	case *rsa.PrivateKey:
		sum := sha256.Sum256(input)
		sig, err := rsa.SignPKCS1v15(rand.Reader, s, crypto.SHA256, sum[:])
		if err != nil {
			return nil, fmt.Errorf("authtest: RS256 sign: %w", err)
		}
		return sig, nil
	case *ecdsa.PrivateKey:
		sum := sha256.Sum256(input)
		r, ss, err := ecdsa.Sign(rand.Reader, s, sum[:])
		if err != nil {
			return nil, fmt.Errorf("authtest: ES256 sign: %w", err)
		}
		// JWS ES256 signatures are R and S as two fixed 32-byte big-endian integers.
		out := make([]byte, 64)
		r.FillBytes(out[:32])
		ss.FillBytes(out[32:])
		return out, nil
	}
	return nil, fmt.Errorf("authtest: unsupported signer %T", k.signer)
}
