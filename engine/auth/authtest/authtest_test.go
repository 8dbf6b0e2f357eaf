package authtest

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

func TestMintWithVerifiesUnderGoJose(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_800_000_000, 0)
	for _, alg := range []string{RS256, ES256, EdDSA} {
		t.Run(alg, func(t *testing.T) {
			t.Parallel()
			k := MustKey(t, alg, "k-"+alg)
			tok := k.MustMint(t, Claims("https://i", "a", "c", []string{"x", "y"}, now, time.Minute), map[string]any{"extra": "v"})
			parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.SignatureAlgorithm(alg)})
			if err != nil {
				t.Fatal(err)
			}
			h := parsed.Headers[0]
			if h.KeyID != k.KID || h.ExtraHeaders[jose.HeaderType] != "at+jwt" || h.ExtraHeaders["extra"] != "v" {
				t.Fatalf("header = %+v", h)
			}
			var c struct {
				jwt.Claims
				Scope    string `json:"scope"`
				ClientID string `json:"client_id"`
			}
			if err := parsed.Claims(k.Public(), &c); err != nil {
				t.Fatalf("signature: %v", err)
			}
			if c.Issuer != "https://i" || c.Subject != "c" || c.ClientID != "c" || c.Scope != "x y" ||
				c.Expiry.Time().Unix() != now.Add(time.Minute).Unix() {
				t.Fatalf("claims = %+v", c)
			}
			other := MustKey(t, alg, "other")
			if err := parsed.Claims(other.Public(), &c); err == nil {
				t.Fatal("verified under another key")
			}
		})
	}
}

func TestHeaderOverridesRemoveMembers(t *testing.T) {
	t.Parallel()
	k := MustKey(t, EdDSA, "k")
	tok := k.MustMint(t, map[string]any{"sub": "s"}, map[string]any{"kid": nil, "typ": nil})
	parsed, err := jwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.EdDSA})
	if err != nil {
		t.Fatal(err)
	}
	if h := parsed.Headers[0]; h.KeyID != "" || h.ExtraHeaders[jose.HeaderType] != nil {
		t.Fatalf("header = %+v", h)
	}
}

func TestForgedTokens(t *testing.T) {
	t.Parallel()
	k := MustKey(t, RS256, "k")
	secret := k.PublicKeyPEM()
	hs := SignHMAC(secret, "k", map[string]any{"sub": "s"})
	parsed, err := jwt.ParseSigned(hs, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		t.Fatal(err)
	}
	if err := parsed.Claims(secret); err != nil {
		t.Fatalf("HS256 forgery does not verify with its secret: %v", err)
	}
	if _, err := jwt.ParseSigned(SignNone(map[string]any{"sub": "s"}), []jose.SignatureAlgorithm{jose.RS256}); err == nil {
		t.Fatal("alg none parsed under an RS256 allow-list")
	}
}

func TestJWKSServerRotatesAndFails(t *testing.T) {
	t.Parallel()
	a, b := MustKey(t, EdDSA, "a"), MustKey(t, ES256, "b")
	s := NewJWKSServer(t, a)
	get := func() (int, jose.JSONWebKeySet) {
		resp, err := http.Get(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		var set jose.JSONWebKeySet
		_ = json.Unmarshal(body, &set)
		return resp.StatusCode, set
	}
	if status, set := get(); status != 200 || len(set.Key("a")) != 1 {
		t.Fatalf("status %d, set %+v", status, set)
	}
	s.SetKeys(a, b)
	if _, set := get(); len(set.Keys) != 2 || len(set.Key("b")) != 1 {
		t.Fatalf("after rotation: %+v", set)
	}
	s.SetDocument(http.StatusServiceUnavailable, nil)
	if status, _ := get(); status != http.StatusServiceUnavailable {
		t.Fatalf("status %d", status)
	}
	if s.Hits() != 3 {
		t.Fatalf("hits = %d", s.Hits())
	}
}
