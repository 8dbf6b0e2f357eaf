package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"switchboard/providers/peer"
)

// cliJSON decodes the one JSON object a command printed with -o json.
func cliJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &v); err != nil {
		t.Fatalf("output %q is not one JSON object: %v", out, err)
	}
	return v
}

// diagnosticCode is the code of the first diagnostic of a refusal printed with -o json.
func diagnosticCode(t *testing.T, out string) string {
	t.Helper()
	v := cliJSON(t, out)
	ds, _ := v["diagnostics"].([]any)
	if v["ok"] != false || len(ds) == 0 {
		t.Fatalf("not a refusal: %s", out)
	}
	code, _ := ds[0].(map[string]any)["code"].(string)
	return code
}

// editRuntime writes a copy of the runtime file at path, beside it (so that its relative paths
// still resolve), with edit applied to the decoded document, and returns the copy's path.
func editRuntime(t testing.TB, path, name string, edit func(doc map[string]any)) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	out, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(filepath.Dir(path), name)
	if err := os.WriteFile(copyPath, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return copyPath
}

func TestPeerKeygen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "peer.key")
	out, errOut, code := cli(t, "peer", "keygen", key)
	if code != 0 {
		t.Fatalf("keygen: exit %d: %s", code, errOut)
	}
	id, err := peer.IDFromKeyFile(key)
	if err != nil {
		t.Fatalf("the written key does not load: %v", err)
	}
	if !strings.HasPrefix(id, "12D3KooW") || out != "wrote "+key+"\npeer id: "+id+"\n" {
		t.Fatalf("keygen printed %q (peer id %s)", out, id)
	}
	info, err := os.Stat(key)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v, %v", info.Mode(), err)
	}
	before, _ := os.ReadFile(key)

	// An identity is never overwritten: exit 1, the file unchanged.
	out, _, code = cli(t, "-o", "json", "peer", "keygen", key)
	if code != 1 || diagnosticCode(t, out) != "peer.key-exists" {
		t.Fatalf("keygen over an existing key: exit %d, %s", code, out)
	}
	if after, _ := os.ReadFile(key); !bytes.Equal(before, after) {
		t.Fatal("the existing key was changed")
	}

	second := filepath.Join(dir, "second.key")
	out, _, code = cli(t, "-o", "json", "peer", "keygen", second)
	v := cliJSON(t, out)
	if code != 0 || v["ok"] != true || v["file"] != second || v["peerId"] == id || !strings.HasPrefix(v["peerId"].(string), "12D3KooW") {
		t.Fatalf("keygen -o json: exit %d, %s", code, out)
	}
	if _, _, code := cli(t, "peer", "keygen", filepath.Join(dir, "missing", "peer.key")); code != 3 {
		t.Fatalf("keygen into a missing folder: exit %d, want 3", code)
	}
	for _, args := range [][]string{{"peer", "keygen"}, {"peer", "keygen", "a", "b"}, {"peer"}, {"peer", "id"}} {
		if _, _, code := cli(t, args...); code != 2 {
			t.Fatalf("%v: exit %d, want 2", args, code)
		}
	}
}

func TestPeerID(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	rt := e.stack.rt.Path
	secrets := filepath.Join(filepath.Dir(rt), "secrets")
	want, err := peer.IDFromKeyFile(filepath.Join(secrets, "peer.key"))
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, "--config", rt, "peer", "id")
	if code != 0 || out != want+"\n" {
		t.Fatalf("peer id: exit %d, %q (%s), want %s", code, out, errOut, want)
	}
	out, _, code = cli(t, "--config", rt, "-o", "json", "peer", "id", "--provider", "peers")
	if v := cliJSON(t, out); code != 0 || v["peerId"] != want || v["provider"] != "peers" {
		t.Fatalf("peer id -o json: exit %d, %s", code, out)
	}
	out, _, code = cli(t, "--config", rt, "-o", "json", "peer", "id", "--provider", "sms-gateway")
	if code != 1 || diagnosticCode(t, out) != "peer.provider-unknown" {
		t.Fatalf("--provider naming an http provider: exit %d, %s", code, out)
	}

	// With two peer providers, --provider chooses.
	if err := peer.Keygen(filepath.Join(secrets, "second.key")); err != nil {
		t.Fatal(err)
	}
	secondID, _ := peer.IDFromKeyFile(filepath.Join(secrets, "second.key"))
	two := editRuntime(t, rt, "two-peers.yaml", func(doc map[string]any) {
		doc["providers"].(map[string]any)["second"] = map[string]any{"kind": "peer", "identityKeyRef": "secret:file/second.key"}
	})
	if _, errOut, code := cli(t, "--config", two, "peer", "id"); code != 2 || !strings.Contains(errOut, "--provider") {
		t.Fatalf("two peer providers without --provider: exit %d, %s", code, errOut)
	}
	if out, errOut, code := cli(t, "--config", two, "peer", "id", "--provider", "second"); code != 0 || out != secondID+"\n" {
		t.Fatalf("--provider second: exit %d, %q (%s), want %s", code, out, errOut, secondID)
	}

	// A key that is not a libp2p identity is refused, naming its reference, never its bytes.
	if err := os.WriteFile(filepath.Join(secrets, "garbage.key"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := editRuntime(t, rt, "bad-key.yaml", func(doc map[string]any) {
		doc["providers"].(map[string]any)["peers"].(map[string]any)["identityKeyRef"] = "secret:file/garbage.key"
	})
	out, _, code = cli(t, "--config", bad, "-o", "json", "peer", "id")
	if code != 1 || diagnosticCode(t, out) != "peer.key-invalid" || strings.Contains(out, "not a key") {
		t.Fatalf("a garbage key: exit %d, %s", code, out)
	}
	none := editRuntime(t, rt, "no-peer.yaml", func(doc map[string]any) {
		delete(doc["providers"].(map[string]any), "peers")
	})
	out, _, code = cli(t, "--config", none, "-o", "json", "peer", "id")
	if code != 1 || diagnosticCode(t, out) != "peer.provider-missing" {
		t.Fatalf("no peer provider: exit %d, %s", code, out)
	}
	if _, _, code := cli(t, "--config", filepath.Join(t.TempDir(), "absent.yaml"), "peer", "id"); code != 3 {
		t.Fatalf("a missing runtime file: exit %d, want 3", code)
	}
}
