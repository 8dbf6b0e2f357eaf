package dkimkey

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// Keygen is `switchboard dkim keygen --domain D --selector S [--algorithm rsa|ed25519] FILE`:
// it checks the domain and selector, generates a key of alg, writes it to path as PEM PKCS #8
// with mode 0600, and returns the TXT record to publish.
//
// It never replaces a file: when path exists the error wraps fs.ErrExist and nothing is
// written. Invalid input (algorithm, domain, selector) wraps ErrInvalidInput and is reported
// before any file is touched; any other error is the file system's. A write that fails after
// the file was created removes it, so a half-written key is never left behind.
func Keygen(path, domain, selector string, alg Algorithm) (Record, error) {
	if _, err := ParseAlgorithm(string(alg)); err != nil {
		return Record{}, err
	}
	if alg == "" {
		alg = RSA
	}
	if err := ValidName("domain", domain); err != nil {
		return Record{}, err
	}
	if err := ValidName("selector", selector); err != nil {
		return Record{}, err
	}
	if _, err := os.Lstat(path); err == nil {
		return Record{}, fmt.Errorf("dkimkey: %s: refusing to overwrite an existing file: %w", path, fs.ErrExist)
	}
	key, err := Generate(alg)
	if err != nil {
		return Record{}, err
	}
	rec, err := NewRecord(domain, selector, key.Public())
	if err != nil {
		return Record{}, err
	}
	pemBytes, err := MarshalPrivateKey(key)
	if err != nil {
		return Record{}, err
	}
	if err := writeNew(path, pemBytes); err != nil {
		return Record{}, err
	}
	return rec, nil
}

// maxKeyFileBytes bounds a key file LoadRecord reads (an RSA-4096 PEM is about 3.3 KB).
const maxKeyFileBytes = 64 << 10

// LoadRecord reads the key file at path (as Keygen wrote it, or any PEM ParsePrivateKey
// accepts) and returns the TXT record of its public half under selector and domain. `switchboard
// dev` uses it to keep one key across restarts: when the file does not exist the error wraps
// fs.ErrNotExist, and the caller runs Keygen instead.
func LoadRecord(path, domain, selector string) (Record, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Record{}, fmt.Errorf("dkimkey: %w", err)
	}
	if info.Size() > maxKeyFileBytes {
		return Record{}, fmt.Errorf("dkimkey: %s is larger than a key file (%d bytes): %w", path, info.Size(), ErrInvalidInput)
	}
	pemBytes, err := os.ReadFile(path)
	if err != nil {
		return Record{}, fmt.Errorf("dkimkey: %w", err)
	}
	key, err := ParsePrivateKey(pemBytes)
	if err != nil {
		return Record{}, fmt.Errorf("dkimkey: %s: %w", path, err)
	}
	return NewRecord(domain, selector, key.Public())
}

// writeNew creates path exclusively with mode 0600 and writes b, syncing before close.
func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("dkimkey: %s: refusing to overwrite an existing file: %w", path, err)
		}
		return fmt.Errorf("dkimkey: create %s: %w", path, err)
	}
	err = f.Chmod(0o600) // whatever the umask, the key is the owner's alone
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("dkimkey: write %s: %w", path, err)
	}
	return nil
}
