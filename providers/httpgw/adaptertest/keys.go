package adaptertest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"switchboard/providers/httpgw"
)

// verifierConfig builds the verifier of a case from its non-secret members and the test
// secrets, and returns the private key that signs its callbacks when the scheme has one.
func verifierConfig(v *verifierSpec, s *setupSpec) (*httpgw.VerifierConfig, crypto.Signer, error) {
	u, err := expandEnv(v.URL, s.Env)
	if err != nil {
		return nil, nil, fmt.Errorf("url: %w", err)
	}
	vc := &httpgw.VerifierConfig{Kind: v.Kind, Header: v.Header, Encoding: v.Encoding, URL: u,
		SignatureMethod: v.SignatureMethod, SignatureHeader: v.SignatureHeader, TimestampHeader: v.TimestampHeader,
		Secret: []byte(s.Secret), Token: s.Secret}
	switch v.Kind {
	case httpgw.VerifierECDSAP256, httpgw.VerifierEd25519:
		return keyedVerifier(vc, v, s)
	case httpgw.VerifierBasic:
		user, pass, ok := strings.Cut(s.Secret, ":")
		if !ok || user == "" || pass == "" {
			return nil, nil, errors.New("the basic verifier needs setup.yaml secret USER:PASSWORD (test credentials)")
		}
		vc.Username, vc.Password = user, pass
		return vc, nil, nil
	}
	if s.Secret == "" {
		return nil, nil, fmt.Errorf("the %s verifier needs setup.yaml secret (a test secret)", v.Kind)
	}
	return vc, nil, nil
}

// keyedVerifier sets the public key of a signature scheme: setup.yaml publicKey (for
// pre-signed callbacks), else the public half of setup.yaml privateKey (the runner signs), else
// the snippet's ecdsa-p256 publicKey (pre-signed callbacks of the real key).
func keyedVerifier(vc *httpgw.VerifierConfig, v *verifierSpec, s *setupSpec) (*httpgw.VerifierConfig, crypto.Signer, error) {
	var priv crypto.Signer
	if s.PrivateKey != "" {
		var err error
		if priv, err = parsePrivateKey(v.Kind, s.PrivateKey); err != nil {
			return nil, nil, fmt.Errorf("setup.yaml privateKey: %w", err)
		}
	}
	switch {
	case s.PublicKey != "":
		vc.PublicKey = []byte(s.PublicKey)
	case priv != nil:
		der, err := x509.MarshalPKIXPublicKey(priv.Public())
		if err != nil {
			return nil, nil, fmt.Errorf("setup.yaml privateKey: %w", err)
		}
		vc.PublicKey = der
	case v.Kind == httpgw.VerifierECDSAP256:
		key, err := expandEnv(v.PublicKey, s.Env)
		if err != nil {
			return nil, nil, fmt.Errorf("publicKey: %w", err)
		}
		vc.PublicKey = []byte(key)
	default:
		return nil, nil, fmt.Errorf("the %s verifier needs setup.yaml privateKey (to sign) or publicKey (pre-signed callbacks)", v.Kind)
	}
	return vc, priv, nil
}

// parsePrivateKey reads the PEM private key of a scheme: P-256 (SEC 1 EC or PKCS #8) for
// ecdsa-p256, Ed25519 (PKCS #8) for ed25519.
func parsePrivateKey(kind, text string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, errors.New("not PEM")
	}
	if kind == httpgw.VerifierECDSAP256 {
		if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil && k.Curve == elliptic.P256() {
			return k, nil
		}
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("not an EC or PKCS #8 private key")
	}
	switch key := k.(type) {
	case *ecdsa.PrivateKey:
		if kind == httpgw.VerifierECDSAP256 && key.Curve == elliptic.P256() {
			return key, nil
		}
	case ed25519.PrivateKey:
		if kind == httpgw.VerifierEd25519 {
			return key, nil
		}
	}
	return nil, fmt.Errorf("not a key of the %s scheme", kind)
}
