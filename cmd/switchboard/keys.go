package main

import (
	"crypto/hkdf"
	"crypto/sha256"
	"fmt"
)

// auditKeys derives the two keys of the audit journal from the runtime's audit key
// (docs/operations.md, "The audit journal"): one chains the records, one makes the pseudonyms.
func auditKeys(secret []byte) (chain, pseudonym []byte, err error) {
	if len(secret) < 16 {
		return nil, nil, fmt.Errorf("audit.keyRef: the audit key must hold at least 16 bytes")
	}
	chain, err = hkdf.Key(sha256.New, secret, nil, "switchboard audit chain v1", 32)
	if err != nil {
		return nil, nil, fmt.Errorf("derive the audit chain key: %w", err)
	}
	pseudonym, err = hkdf.Key(sha256.New, secret, nil, "switchboard pseudonyms v1", 32)
	if err != nil {
		return nil, nil, fmt.Errorf("derive the pseudonym key: %w", err)
	}
	return chain, pseudonym, nil
}
