package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"switchboard/engine"
	"switchboard/engine/auth/authtest"
	"switchboard/engine/enginetest"
)

// FuzzAuthenticate feeds arbitrary Authorization header values to a verifier with a file key set
// (no network): it must never panic, and every refusal is authentication.refused, never a 500.
func FuzzAuthenticate(f *testing.F) {
	key := testKey(f, "eddsa-1")
	dir := f.TempDir()
	path := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(path, authtest.JWKS(key, testKey(f, "rs256-1"), testKey(f, "es256-1")), 0o600); err != nil {
		f.Fatal(err)
	}
	clock := enginetest.NewFakeClock(testStart)
	v, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience, JWKSFile: path,
		AllowedClients: []string{testClient}}, clock)
	if err != nil {
		f.Fatal(err)
	}
	claims := authtest.Claims(testIssuer, testAudience, testClient, []string{"messaging:send"}, testStart, testTTL)
	good := key.MustMint(f, claims, nil)
	b64 := base64.RawURLEncoding.EncodeToString
	for _, seed := range []string{
		"", "Bearer", "Bearer ", "bearer " + good, "Bearer " + good, "Bearer " + good + "x",
		"Basic Zm9vOmJhcg==", "Bearer a.b.c", "Bearer ..", "Bearer " + authtest.SignNone(claims),
		"Bearer " + authtest.SignHMAC(key.PublicKeyPEM(), "eddsa-1", claims),
		"Bearer " + b64([]byte(`{"alg":"EdDSA","typ":"at+jwt","crit":["exp"]}`)) + "." + b64([]byte(`{}`)) + ".AA",
		"Bearer " + b64([]byte(`{"alg":"RS256","typ":"at+jwt","kid":"rs256-1"}`)) + "." + b64([]byte(`{"exp":1e400}`)) + ".AA",
		"Bearer " + b64([]byte(`{"alg":"ES256","typ":"at+jwt","jwk":{"kty":"EC"}}`)) + "." + b64([]byte(`[]`)) + ".AA",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		p, err := v.Authenticate(context.Background(), header)
		if err == nil {
			if p == nil || p.Subject == "" || p.ClientID != testClient {
				t.Fatalf("accepted with principal %+v", p)
			}
			return
		}
		var prob *engine.Problem
		if !errors.As(err, &prob) || prob.Code != engine.CodeAuthenticationRefused {
			t.Fatalf("err = %v, want authentication.refused", err)
		}
		if WWWAuthenticate(err) == "" {
			t.Fatal("refusal without a challenge")
		}
	})
}
