package authtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
)

// signingInput returns base64url(header) "." base64url(claims).
func signingInput(header, claims map[string]any) (string, error) {
	h, err := json.Marshal(header)
	if err != nil {
		return "", fmt.Errorf("authtest: marshal header: %w", err)
	}
	c, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("authtest: marshal claims: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c), nil
}

// Forge builds a compact JWS from header, claims and an arbitrary signature (which may be
// empty). It panics only when header or claims cannot be marshalled as JSON.
func Forge(header, claims map[string]any, signature []byte) string {
	input, err := signingInput(header, claims)
	if err != nil {
		panic(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(signature)
}

// SignNone returns an unsecured token: header {"alg": "none", "typ": "at+jwt"} and an empty
// signature, the classic downgrade attack.
func SignNone(claims map[string]any) string {
	return Forge(map[string]any{"alg": "none", "typ": "at+jwt"}, claims, nil)
}

// SignHMAC returns a token signed with HMAC-SHA256 under secret and header {"alg": "HS256",
// "typ": "at+jwt", "kid": kid}: with the verifier's public key bytes as the secret, this is the
// algorithm-confusion attack.
func SignHMAC(secret []byte, kid string, claims map[string]any) string {
	header := map[string]any{"alg": "HS256", "typ": "at+jwt"}
	if kid != "" {
		header["kid"] = kid
	}
	input, err := signingInput(header, claims)
	if err != nil {
		panic(err)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(input))
	return input + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// PublicKeyPEM returns the key's public key as a PKIX PEM block, the bytes an attacker would
// use as an HMAC secret.
func (k *Key) PublicKeyPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.signer.Public())
	if err != nil {
		panic(fmt.Sprintf("authtest: marshal public key: %v", err))
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}
