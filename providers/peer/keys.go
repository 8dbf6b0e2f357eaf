package peer

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/libp2p/go-libp2p/core/crypto"
	libp2ppeer "github.com/libp2p/go-libp2p/core/peer"
)

// ErrKeyExists is returned by Keygen when the file is already there: an identity is never
// overwritten, since the peer id is what other hosts know this one by.
var ErrKeyExists = errors.New("peer identity key file already exists")

// Keygen writes a new Ed25519 identity to path, in libp2p's marshalled private key form
// (crypto.MarshalPrivateKey), with mode 0600. It refuses an existing file (ErrKeyExists) and
// never leaves a partial file behind.
func Keygen(path string) error {
	priv, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return fmt.Errorf("generate Ed25519 key: %w", err)
	}
	raw, err := crypto.MarshalPrivateKey(priv)
	if err != nil {
		return fmt.Errorf("marshal identity key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", path, ErrKeyExists)
		}
		return fmt.Errorf("create identity key file: %w", err)
	}
	if _, err := f.Write(raw); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("write identity key file: %w", err)
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return fmt.Errorf("sync identity key file: %w", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("close identity key file: %w", err)
	}
	return nil
}

// IDFromKeyFile reads an identity key file (as Keygen wrote it) and returns its peer id in
// the base58 form (12D3KooW… for Ed25519).
func IDFromKeyFile(path string) (string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read identity key file: %w", err)
	}
	return IDFromKey(raw)
}

// IDFromKey returns the peer id of a marshalled identity key (see ParseIdentityKey).
func IDFromKey(raw []byte) (string, error) {
	priv, err := ParseIdentityKey(raw)
	if err != nil {
		return "", err
	}
	id, err := libp2ppeer.IDFromPrivateKey(priv)
	if err != nil {
		return "", fmt.Errorf("derive peer id: %w", err)
	}
	return id.String(), nil
}

// ParseIdentityKey decodes an identity key: the bytes Keygen writes, or the same bytes in
// standard base64 (surrounding white space ignored), so that a key can also come from an
// environment variable. Only Ed25519 keys are accepted, as the peer channel requires (docs/runtime.md, "Provider kind").
func ParseIdentityKey(raw []byte) (crypto.PrivKey, error) {
	if len(raw) == 0 {
		return nil, errors.New("identity key is empty")
	}
	priv, err := crypto.UnmarshalPrivateKey(raw)
	if err != nil {
		text := bytes.TrimSpace(raw)
		decoded, derr := base64.StdEncoding.DecodeString(string(text))
		if derr != nil {
			return nil, fmt.Errorf("identity key is not a libp2p private key (write one with `switchboard peer keygen`): %w", err)
		}
		if priv, err = crypto.UnmarshalPrivateKey(decoded); err != nil {
			return nil, fmt.Errorf("identity key is not a libp2p private key: %w", err)
		}
	}
	if priv.Type() != crypto.Ed25519 {
		return nil, fmt.Errorf("identity key is of type %s, want Ed25519", priv.Type())
	}
	return priv, nil
}
