// Package pubkey reads the public keys gateways publish for their signed callbacks, in the
// forms they show them: ECDSA P-256 (SendGrid) and Ed25519 (Telnyx). It is a leaf package (the
// standard library only) so that the runtime loader, which validates the keys with line
// numbers, and the HTTP gateway provider, which verifies with them, read keys one way.
package pubkey

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// der returns the DER bytes of a key given as DER (binary, starting with a SEQUENCE), as the
// base64 of DER (white space allowed, padding optional), or as a PEM PUBLIC KEY block. A
// SEQUENCE starts with the byte 0x30, which is also the character '0' that one base64 text in
// 64 starts with: bytes starting with it are DER only when they parse as a key.
func der(b []byte) ([]byte, error) {
	if len(b) > 0 && b[0] == 0x30 {
		if _, err := x509.ParsePKIXPublicKey(b); err == nil {
			return b, nil // DER is binary: its last bytes may look like white space, never trim it
		}
	}
	text := bytes.TrimSpace(b)
	if len(text) == 0 {
		return nil, errors.New("empty")
	}
	if block, _ := pem.Decode(text); block != nil {
		if block.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("PEM block %q is not a PUBLIC KEY", block.Type)
		}
		return block.Bytes, nil
	}
	compact := strings.Join(strings.Fields(string(text)), "")
	decoded, err := base64.StdEncoding.DecodeString(compact)
	if err != nil {
		if decoded, err = base64.RawStdEncoding.DecodeString(compact); err != nil {
			return nil, errors.New("neither DER, base64 of DER nor PEM")
		}
	}
	return decoded, nil
}

// P256 reads an ECDSA P-256 public key given as a DER SubjectPublicKeyInfo, as the base64 of
// one (how SendGrid shows its verification key), or as a PEM "PUBLIC KEY" block.
func P256(b []byte) (*ecdsa.PublicKey, error) {
	d, err := der(b)
	if err != nil {
		return nil, err
	}
	pub, err := x509.ParsePKIXPublicKey(d)
	if err != nil {
		return nil, fmt.Errorf("not a SubjectPublicKeyInfo: %w", err)
	}
	key, ok := pub.(*ecdsa.PublicKey)
	if !ok || key.Curve != elliptic.P256() {
		return nil, errors.New("not an ECDSA P-256 key")
	}
	return key, nil
}

// Ed25519 reads an Ed25519 public key given as its 32 raw bytes, their base64 (how Telnyx
// shows it), a DER SubjectPublicKeyInfo, its base64, or a PEM PUBLIC KEY block.
func Ed25519(b []byte) (ed25519.PublicKey, error) {
	if len(b) == ed25519.PublicKeySize {
		return ed25519.PublicKey(bytes.Clone(b)), nil
	}
	d, err := der(b)
	if err != nil {
		return nil, err
	}
	if len(d) == ed25519.PublicKeySize {
		return ed25519.PublicKey(d), nil
	}
	pub, err := x509.ParsePKIXPublicKey(d)
	if err != nil {
		return nil, fmt.Errorf("not a SubjectPublicKeyInfo: %w", err)
	}
	key, ok := pub.(ed25519.PublicKey)
	if !ok {
		return nil, errors.New("not an Ed25519 key")
	}
	return key, nil
}
