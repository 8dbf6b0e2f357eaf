package peer

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"

	"switchboard/engine"
)

func TestKeygenWritesAnIdentityOnce(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "peer.key")
	if err := Keygen(path); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, want 0600", info.Mode().Perm())
	}
	id, err := IDFromKeyFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "12D3KooW") || !engine.ValidPeerID(id) {
		t.Fatalf("peer id %q is not an Ed25519 libp2p id", id)
	}
	before, _ := os.ReadFile(path)
	if err := Keygen(path); !errors.Is(err, ErrKeyExists) {
		t.Fatalf("second Keygen: %v, want ErrKeyExists", err)
	}
	after, _ := os.ReadFile(path)
	if string(before) != string(after) {
		t.Fatal("second Keygen changed the key")
	}

	// The host runs under that identity, also from the key's base64 text.
	for name, key := range map[string][]byte{
		"raw":    before,
		"base64": []byte(base64.StdEncoding.EncodeToString(before) + "\n"),
	} {
		p, err := New(Config{ID: "peers", IdentityKey: key})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.PeerID() != id {
			t.Fatalf("%s: host id %s, key file id %s", name, p.PeerID(), id)
		}
		_ = p.Close()
	}
}

func TestKeygenIntoMissingFolderFails(t *testing.T) {
	t.Parallel()
	if err := Keygen(filepath.Join(t.TempDir(), "no", "such", "peer.key")); err == nil {
		t.Fatal("Keygen into a missing folder succeeded")
	}
}

func TestIdentityKeyRefusals(t *testing.T) {
	t.Parallel()
	secp, _, err := crypto.GenerateSecp256k1Key(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secpRaw, err := crypto.MarshalPrivateKey(secp)
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string][]byte{
		"empty":     nil,
		"hex text":  []byte("8f3a0c1d2e4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff"),
		"secp256k1": secpRaw,
	} {
		if _, err := IDFromKey(raw); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := IDFromKeyFile(filepath.Join(t.TempDir(), "absent.key")); err == nil {
		t.Error("missing file: accepted")
	}
}
