package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"switchboard/engine"
	"switchboard/engine/auth/authtest"
)

func requireUnavailable(t testing.TB, err error) {
	t.Helper()
	var p *engine.Problem
	if !errors.As(err, &p) || p.Code != engine.CodeServiceUnavailable {
		t.Fatalf("err = %v, want service.unavailable", err)
	}
	if got := WWWAuthenticate(err); got != "" {
		t.Fatalf("WWWAuthenticate(service.unavailable) = %q, want none", got)
	}
}

func TestJWKSRotationAfterRefetch(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	old, fresh := testKey(t, "eddsa-1"), testKey(t, "eddsa-2")
	if _, err := f.auth(old.MustMint(t, f.claims(), nil)); err != nil {
		t.Fatal(err)
	}
	if f.jwks.Hits() != 1 {
		t.Fatalf("hits = %d, want 1", f.jwks.Hits())
	}
	f.jwks.SetKeys(old, fresh) // the issuer rotates in a new key

	// Within the refetch interval a new kid is not fetched yet: refused, no request.
	f.clock.Advance(refetchInterval - time.Second)
	tok := fresh.MustMint(t, f.claims(), nil)
	_, err := f.auth(tok)
	requireRefused(t, err, detailUnknownKey, tok)
	if f.jwks.Hits() != 1 {
		t.Fatalf("hits = %d, want 1 (refetch inside the interval)", f.jwks.Hits())
	}

	// Past the interval the unknown kid triggers one refetch and the new key works.
	f.clock.Advance(time.Second)
	if _, err := f.auth(tok); err != nil {
		t.Fatalf("after refetch: %v", err)
	}
	if f.jwks.Hits() != 2 {
		t.Fatalf("hits = %d, want 2", f.jwks.Hits())
	}

	// A flood of random kids right after cannot make us hammer the endpoint.
	for i := 0; i < 50; i++ {
		bad := old.WithKID(fmt.Sprintf("random-%d", i)).MustMint(t, f.claims(), nil)
		_, err := f.auth(bad)
		requireRefused(t, err, detailUnknownKey, bad)
	}
	if f.jwks.Hits() != 2 {
		t.Fatalf("hits = %d after random kids, want 2", f.jwks.Hits())
	}
}

func TestJWKSConcurrentUnknownKidsFetchOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key := testKey(t, "es256-2") // not served
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = f.auth(key.MustMint(t, f.claims(), nil))
		}()
	}
	wg.Wait()
	if f.jwks.Hits() != 1 {
		t.Fatalf("hits = %d, want 1", f.jwks.Hits())
	}
}

func TestJWKSDownWithoutKeysIsUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.jwks.SetDocument(http.StatusServiceUnavailable, []byte("down"))
	tok := testKey(t, "eddsa-1").MustMint(t, f.claims(), nil)
	_, err := f.auth(tok)
	requireUnavailable(t, err)
	if err := f.v.Refresh(context.Background()); err == nil {
		t.Fatal("Refresh succeeded against a failing endpoint")
	}

	// The endpoint recovers; the next try after the short empty-set interval fetches again.
	f.jwks.SetKeys(testKey(t, "eddsa-1"))
	f.clock.Advance(emptyRetryInterval)
	if _, err := f.auth(tok); err != nil {
		t.Fatalf("after recovery: %v", err)
	}
}

func TestJWKSMalformedDocumentIsUnavailable(t *testing.T) {
	t.Parallel()
	for name, doc := range map[string]string{
		"not JSON":          "<html>",
		"no keys":           `{"keys":[]}`,
		"only an HMAC key":  `{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"eddsa-1"}]}`,
		"only an enc key":   `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo","use":"enc"}]}`,
		"unknown key types": `{"keys":[{"kty":"XYZ"}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			f.jwks.SetDocument(http.StatusOK, []byte(doc))
			_, err := f.auth(testKey(t, "eddsa-1").MustMint(t, f.claims(), nil))
			requireUnavailable(t, err)
		})
	}
}

func TestJWKSDownWithCachedKeysKeepsWorking(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key := testKey(t, "rs256-1")
	if err := f.v.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.jwks.SetDocument(http.StatusInternalServerError, nil)

	// The set is stale after an hour; the refresh fails, the cached key still serves.
	f.clock.Advance(maxKeySetAge + time.Minute)
	if _, err := f.auth(key.MustMint(t, f.claims(), nil)); err != nil {
		t.Fatalf("stale key set during an outage: %v", err)
	}
	if f.jwks.Hits() != 2 {
		t.Fatalf("hits = %d, want 2 (one refresh attempt)", f.jwks.Hits())
	}
	// An unknown kid during the outage is our failure, not the caller's.
	f.clock.Advance(refetchInterval)
	_, err := f.auth(testKey(t, "rs256-2").MustMint(t, f.claims(), nil))
	requireUnavailable(t, err)
}

func TestJWKSWithdrawnKeyIsRefusedAfterRefresh(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	key := testKey(t, "es256-1")
	if _, err := f.auth(key.MustMint(t, f.claims(), nil)); err != nil {
		t.Fatal(err)
	}
	f.jwks.SetKeys(testKey(t, "es256-2"))
	f.clock.Advance(maxKeySetAge)
	tok := key.MustMint(t, f.claims(), nil)
	_, err := f.auth(tok)
	requireRefused(t, err, detailUnknownKey, tok)
}

func TestJWKSFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "jwks.json")
	key := testKey(t, "eddsa-1")
	if err := os.WriteFile(path, authtest.JWKS(key), 0o600); err != nil {
		t.Fatal(err)
	}
	clock := newFixture(t).clock
	v, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience, JWKSFile: path,
		AllowedClients: []string{testClient}}, clock)
	if err != nil {
		t.Fatal(err)
	}
	claims := authtest.Claims(testIssuer, testAudience, testClient, nil, clock.Now(), testTTL)
	if _, err := v.Authenticate(context.Background(), "Bearer "+key.MustMint(t, claims, nil)); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	// The file is read once: rewriting it changes nothing, and an unknown kid is refused at once.
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := testKey(t, "eddsa-2").MustMint(t, claims, nil)
	_, err = v.Authenticate(context.Background(), "Bearer "+tok)
	requireRefused(t, err, detailUnknownKey, tok)
	if err := v.Refresh(context.Background()); err != nil {
		t.Fatalf("Refresh of a file source: %v", err)
	}

	for name, doc := range map[string][]byte{"malformed": []byte("{"), "no usable key": []byte(`{"keys":[]}`)} {
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, doc, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience, JWKSFile: p,
			AllowedClients: []string{testClient}}, clock); err == nil {
			t.Fatalf("%s JWKS file accepted", name)
		}
	}
	if _, err := NewVerifier(Config{Issuer: testIssuer, Audience: testAudience,
		JWKSFile: filepath.Join(dir, "missing.json"), AllowedClients: []string{testClient}}, clock); err == nil {
		t.Fatal("missing JWKS file accepted")
	}
}

func TestParseJWKSSkipsWeakAndForeignKeys(t *testing.T) {
	t.Parallel()
	keys, err := parseJWKS(authtest.JWKS(testKey(t, "rs256-1"), testKey(t, "es256-1")))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("keys = %d, want 2", len(keys))
	}

	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hsAlg := testKey(t, "eddsa-1").JWK()
	hsAlg.Algorithm = "HS256"
	for name, jwk := range map[string]jose.JSONWebKey{
		"RSA 1024":           {Key: &weak.PublicKey, KeyID: "weak"},
		"EC P-384":           {Key: &p384.PublicKey, KeyID: "p384"},
		"alg we do not take": hsAlg,
	} {
		doc, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{jwk}})
		if err != nil {
			t.Fatal(err)
		}
		if keys, err := parseJWKS(doc); err == nil {
			t.Fatalf("%s: parseJWKS kept %d keys", name, len(keys))
		}
	}

	// A private key published by mistake is reduced to its public half.
	edPub, edPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: edPriv, KeyID: "p"}}})
	if err != nil {
		t.Fatal(err)
	}
	keys, err = parseJWKS(doc)
	if err != nil || len(keys) != 1 {
		t.Fatalf("private JWK: keys %d, err %v", len(keys), err)
	}
	if pub, ok := keys[0].pub.(ed25519.PublicKey); !ok || !pub.Equal(edPub) {
		t.Fatalf("private JWK kept as %T", keys[0].pub)
	}
}
