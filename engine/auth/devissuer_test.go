package auth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine/enginetest"
)

func TestDevIssuerRoundTrip(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "dev", "issuer", "key.pem")
	jwksPath := filepath.Join(dir, "dev", "secrets", "jwks.json")
	iss, err := NewDevIssuer("http://127.0.0.1:8107/dev-issuer", "switchboard")
	if err != nil {
		t.Fatal(err)
	}
	if err := iss.WriteFiles(keyPath, jwksPath); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{keyPath, jwksPath} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Fatalf("%s mode %v, want 0600", p, st.Mode().Perm())
		}
	}
	// Rewriting over a file with a looser mode still leaves 0600.
	if err := os.Chmod(keyPath, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := iss.WriteFiles(keyPath, jwksPath); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(keyPath); st.Mode().Perm() != 0o600 {
		t.Fatalf("rewritten key mode %v", st.Mode().Perm())
	}
	pem, _ := os.ReadFile(keyPath)
	if !strings.HasPrefix(string(pem), "-----BEGIN PRIVATE KEY-----") {
		t.Fatalf("key file is not a PKCS #8 PEM block")
	}
	var set struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(iss.JWKS(), &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("JWKS %s: %v", iss.JWKS(), err)
	}
	if k := set.Keys[0]; k["kty"] != "OKP" || k["crv"] != "Ed25519" || k["alg"] != "EdDSA" ||
		k["use"] != "sig" || k["kid"] != iss.KeyID() || k["d"] != nil {
		t.Fatalf("JWK = %v", k)
	}

	loaded, err := LoadDevIssuer(keyPath, iss.Issuer(), iss.Audience())
	if err != nil {
		t.Fatal(err)
	}
	if loaded.KeyID() != iss.KeyID() {
		t.Fatalf("loaded kid %q, written %q", loaded.KeyID(), iss.KeyID())
	}

	clock := enginetest.NewFakeClock(time.Now())
	v, err := NewVerifier(Config{Issuer: iss.Issuer(), Audience: iss.Audience(), JWKSFile: jwksPath,
		AllowedClients: []string{testClient}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	// A token of the loaded issuer verifies against the JWKS the original wrote.
	tok, err := loaded.Mint(testClient, []string{"messaging:send", "messaging:operate"}, time.Hour, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Authenticate(context.Background(), "Bearer "+tok)
	if err != nil {
		t.Fatalf("Authenticate dev token: %v", err)
	}
	if p.Subject != testClient || p.ClientID != testClient || len(p.Scopes) != 2 ||
		!p.ExpiresAt.Equal(clock.Now().Add(time.Hour).Truncate(time.Second)) {
		t.Fatalf("principal = %+v", *p)
	}
	// And it expires.
	clock.Advance(time.Hour + DefaultLeeway)
	v2, _ := NewVerifier(Config{Issuer: iss.Issuer(), Audience: iss.Audience(), JWKSFile: jwksPath,
		AllowedClients: []string{testClient}}, clock)
	_, err = v2.Authenticate(context.Background(), "Bearer "+tok)
	requireRefused(t, err, detailExpired, tok)
}

func TestDevIssuerMintClaims(t *testing.T) {
	t.Parallel()
	iss, err := NewDevIssuer("https://dev.example", "aud")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	a, err := iss.Mint("c", nil, time.Minute, now)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := iss.Mint("c", nil, time.Minute, now)
	if a == b {
		t.Fatal("two mints gave the same token: jti is not random")
	}
	var header map[string]any
	if err := json.Unmarshal(decodeSegment(t, a, 0), &header); err != nil {
		t.Fatal(err)
	}
	if header["typ"] != "at+jwt" || header["alg"] != "EdDSA" || header["kid"] != iss.KeyID() {
		t.Fatalf("header = %v", header)
	}
	var claims map[string]any
	if err := json.Unmarshal(decodeSegment(t, a, 1), &claims); err != nil {
		t.Fatal(err)
	}
	if claims["iss"] != "https://dev.example" || claims["aud"] != "aud" || claims["sub"] != "c" ||
		claims["client_id"] != "c" || claims["iat"] != 1.8e9 || claims["nbf"] != 1.8e9 ||
		claims["exp"] != 1.8e9+60 || claims["jti"] == "" {
		t.Fatalf("claims = %v", claims)
	}
	if _, ok := claims["scope"]; ok {
		t.Fatal("scope claim present without scopes")
	}
	if _, err := iss.Mint("", nil, time.Minute, now); err == nil {
		t.Fatal("minted without a client")
	}
	if _, err := iss.Mint("c", nil, 0, now); err == nil {
		t.Fatal("minted with a zero ttl")
	}
}

func TestLoadDevIssuerRefusesBadKeys(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := map[string]string{
		"not PEM":    "hello",
		"wrong type": "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
		"bad DER":    "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
	}
	for name, body := range cases {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadDevIssuer(p, "https://dev.example", "aud"); err == nil {
			t.Fatalf("%s: loaded", name)
		}
	}
	if _, err := LoadDevIssuer(filepath.Join(dir, "missing"), "https://dev.example", "aud"); err == nil {
		t.Fatal("missing file loaded")
	}
	if _, err := NewDevIssuer("", "aud"); err == nil {
		t.Fatal("dev issuer without an issuer")
	}
}

// decodeSegment returns the decoded i-th segment of a compact JWS.
func decodeSegment(t testing.TB, token string, i int) []byte {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d segments", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		t.Fatal(err)
	}
	return b
}
