package mockpush

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
)

// The APNs key id and team id a Server's key goes by.
const (
	KeyID  = "MOCKKEY001"
	TeamID = "MOCKTEAM01"
)

// credential is a Server's own throw-away key: the private half is for its client (SecretFile),
// the public half verifies what the client signs.
type credential struct {
	rsa   *rsa.PrivateKey   // FCM: the service account's key
	ecdsa *ecdsa.PrivateKey // APNs: the signing key
}

func newCredential(p Protocol) (credential, error) {
	if p == FCM {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return credential{}, fmt.Errorf("mockpush: service account key: %w", err)
		}
		return credential{rsa: k}, nil
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return credential{}, fmt.Errorf("mockpush: APNs key: %w", err)
	}
	return credential{ecdsa: k}, nil
}

// SecretFile is the secret file of the Server's credential, as the runtime file's secret names
// it: for FCM a service account's JSON key whose token_uri is the Server's token endpoint, for
// APNs a .p8 key (of KeyID and TeamID). It is valid after Start.
func (s *Server) SecretFile() ([]byte, error) {
	var der []byte
	var err error
	if s.opts.Protocol == FCM {
		der, err = x509.MarshalPKCS8PrivateKey(s.cred.rsa)
	} else {
		der, err = x509.MarshalPKCS8PrivateKey(s.cred.ecdsa)
	}
	if err != nil {
		return nil, fmt.Errorf("mockpush: key: %w", err)
	}
	p8 := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	if s.opts.Protocol == APNs {
		return p8, nil
	}
	file, err := json.MarshalIndent(map[string]string{
		"type": "service_account", "project_id": "switchboard-dev", "private_key_id": "mock-key-1",
		"private_key": string(p8), "client_email": "switchboard-dev@switchboard-dev.iam.gserviceaccount.com",
		"token_uri": s.url + "/token",
	}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("mockpush: service account file: %w", err)
	}
	return file, nil
}
