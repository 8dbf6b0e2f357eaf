// Package pushkey reads the signing keys of the push gateways' authentication kinds: an APNs
// .p8 key (apns-token) and a Google service account's JSON key (google-service-account). The
// runtime loader checks them with it before listeners bind, and the http provider signs with
// what ParseAPNsKey returns. It imports the standard library only, so both may use it.
package pushkey

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
)

// Errors of the readers; none repeats any part of the key.
var (
	// ErrNotAPNsKey: not a PEM PKCS #8 ECDSA P-256 private key.
	ErrNotAPNsKey = errors.New("not an APNs signing key: the .p8 file (a PEM PKCS #8 ECDSA P-256 private key)")
	// ErrNotServiceAccount: not a service account's JSON key.
	ErrNotServiceAccount = errors.New("not a service account's JSON key (type service_account), as the Google Cloud console downloads it")
	// ErrNoClientEmail: the service account key names no client_email.
	ErrNoClientEmail = errors.New("the service account key has no client_email")
	// ErrNotRSAKey: the service account key's private_key is no RSA private key.
	ErrNotRSAKey = errors.New("the service account key's private_key is not an RSA private key in PEM")
)

// ParseAPNsKey reads an APNs signing key: a PEM block holding a PKCS #8 ECDSA P-256 private
// key, as Apple's developer site downloads it.
func ParseAPNsKey(data []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, ErrNotAPNsKey
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, ErrNotAPNsKey
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, ErrNotAPNsKey
	}
	return ec, nil
}

// ServiceAccount is what CheckServiceAccount reads of a service account's JSON key.
type ServiceAccount struct {
	Type        string `json:"type"`
	ClientEmail string `json:"client_email"`
	PrivateKey  string `json:"private_key"`
	// TokenURI is the token endpoint the JWT grant is sent to ("" in a key that names none).
	TokenURI string `json:"token_uri"`
}

// CheckServiceAccount reads a service account's JSON key and checks that it has a client email
// and an RSA private key (PEM, PKCS #8 or PKCS #1). The caller checks TokenURI's form.
func CheckServiceAccount(data []byte) (ServiceAccount, error) {
	var key ServiceAccount
	if json.Unmarshal(data, &key) != nil || key.Type != "service_account" {
		return ServiceAccount{}, ErrNotServiceAccount
	}
	if key.ClientEmail == "" {
		return ServiceAccount{}, ErrNoClientEmail
	}
	if !isRSAKey([]byte(key.PrivateKey)) {
		return ServiceAccount{}, ErrNotRSAKey
	}
	return key, nil
}

// isRSAKey reports whether data is a PEM RSA private key, PKCS #8 or PKCS #1.
func isRSAKey(data []byte) bool {
	block, _ := pem.Decode(data)
	if block == nil {
		return false
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		_, ok := k.(*rsa.PrivateKey)
		return ok
	}
	_, err := x509.ParsePKCS1PrivateKey(block.Bytes)
	return err == nil
}
