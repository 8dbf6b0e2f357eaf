package dkimkey

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// Algorithm is a DKIM key type, spelled as the k= tag of the TXT record spells it.
type Algorithm string

// The algorithms keygen offers.
const (
	// RSA is an RSA-2048 key signing rsa-sha256, which every verifier understands.
	RSA Algorithm = "rsa"
	// Ed25519 is an Ed25519 key signing ed25519-sha256 (RFC 8463): short records, fast
	// signatures, not yet checked by every receiver.
	Ed25519 Algorithm = "ed25519"
)

// RSABits is the size of the RSA keys Generate makes.
const RSABits = 2048

// minRSABits is the smallest RSA key ParsePrivateKey accepts (RFC 8301 section 3.2).
const minRSABits = 1024

// ErrInvalidInput marks a refusal caused by what the caller asked for (an unknown algorithm, a
// malformed domain or selector, a key that is not a usable DKIM key), as opposed to a failure
// of the file system. Compare with errors.Is.
var ErrInvalidInput = errors.New("dkimkey: invalid input")

// ParseAlgorithm reads the --algorithm flag: "rsa" (also the empty string) or "ed25519", in
// any case. Anything else is an error wrapping ErrInvalidInput.
func ParseAlgorithm(s string) (Algorithm, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", string(RSA):
		return RSA, nil
	case string(Ed25519):
		return Ed25519, nil
	}
	return "", fmt.Errorf("algorithm %q: must be rsa or ed25519: %w", s, ErrInvalidInput)
}

// Generate makes a new signing key from crypto/rand: RSA-2048 for RSA, Ed25519 for Ed25519.
// The returned signer is an *rsa.PrivateKey or an ed25519.PrivateKey.
func Generate(alg Algorithm) (crypto.Signer, error) {
	switch alg {
	case RSA:
		k, err := rsa.GenerateKey(rand.Reader, RSABits)
		if err != nil {
			return nil, fmt.Errorf("dkimkey: generate an RSA key: %w", err)
		}
		return k, nil
	case Ed25519:
		_, k, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return nil, fmt.Errorf("dkimkey: generate an Ed25519 key: %w", err)
		}
		return k, nil
	}
	return nil, fmt.Errorf("algorithm %q: must be rsa or ed25519: %w", alg, ErrInvalidInput)
}

// MarshalPrivateKey encodes key as one PEM block "PRIVATE KEY" holding PKCS #8, the form
// keygen writes and ParsePrivateKey reads back.
func MarshalPrivateKey(key crypto.Signer) ([]byte, error) {
	if _, err := AlgorithmOf(key.Public()); err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("dkimkey: encode the private key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// ParsePrivateKey reads a DKIM signing key from PEM: "PRIVATE KEY" (PKCS #8, RSA or Ed25519)
// or "RSA PRIVATE KEY" (PKCS #1). RSA keys shorter than 1024 bits are refused (RFC 8301).
// Every refusal wraps ErrInvalidInput and never quotes the key.
func ParsePrivateKey(pemBytes []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, fmt.Errorf("DKIM key is not PEM: %w", ErrInvalidInput)
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("DKIM key PEM block %q: want PRIVATE KEY or RSA PRIVATE KEY: %w", block.Type, ErrInvalidInput)
	}
	if err != nil {
		return nil, fmt.Errorf("DKIM key does not parse (%v): %w", err, ErrInvalidInput)
	}
	switch k := key.(type) {
	case *rsa.PrivateKey:
		if k.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("DKIM RSA key has %d bits, want at least %d: %w", k.N.BitLen(), minRSABits, ErrInvalidInput)
		}
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("DKIM key is %T, want RSA or Ed25519: %w", key, ErrInvalidInput)
}

// AlgorithmOf names the algorithm of a public key (*rsa.PublicKey or ed25519.PublicKey).
func AlgorithmOf(pub crypto.PublicKey) (Algorithm, error) {
	switch pub.(type) {
	case *rsa.PublicKey:
		return RSA, nil
	case ed25519.PublicKey:
		return Ed25519, nil
	}
	return "", fmt.Errorf("DKIM public key is %T, want RSA or Ed25519: %w", pub, ErrInvalidInput)
}

// publicKeyData is the p= tag: base64 of the SubjectPublicKeyInfo for RSA (RFC 6376 section
// 3.6.1), of the 32 raw key bytes for Ed25519 (RFC 8463 section 4.2).
func publicKeyData(pub crypto.PublicKey) (string, error) {
	switch k := pub.(type) {
	case *rsa.PublicKey:
		der, err := x509.MarshalPKIXPublicKey(k)
		if err != nil {
			return "", fmt.Errorf("dkimkey: encode the RSA public key: %w", err)
		}
		return base64.StdEncoding.EncodeToString(der), nil
	case ed25519.PublicKey:
		return base64.StdEncoding.EncodeToString(k), nil
	}
	return "", fmt.Errorf("DKIM public key is %T, want RSA or Ed25519: %w", pub, ErrInvalidInput)
}
