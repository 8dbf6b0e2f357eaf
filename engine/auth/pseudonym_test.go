package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"testing"
)

func TestPseudonym(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	got := Pseudonym(key, KindCaller, "https://id.example\x00case-system")

	// The definition, computed independently.
	m := hmac.New(sha256.New, key)
	m.Write([]byte("caller\x00https://id.example\x00case-system"))
	want := "caller:" + hex.EncodeToString(m.Sum(nil)[:16])
	if got != want {
		t.Fatalf("Pseudonym = %q, want %q", got, want)
	}
	if !regexp.MustCompile(`^caller:[0-9a-f]{32}$`).MatchString(got) {
		t.Fatalf("shape of %q", got)
	}
	if Pseudonym(key, KindCaller, "https://id.example\x00case-system") != got {
		t.Fatal("not deterministic")
	}
	others := map[string]string{
		"other key":   Pseudonym([]byte("another key"), KindCaller, "https://id.example\x00case-system"),
		"other kind":  Pseudonym(key, KindRecipient, "https://id.example\x00case-system"),
		"other value": Pseudonym(key, KindCaller, "https://id.example\x00case-systen"),
		// The separator keeps kind and value apart: ("caller", "x") differs from ("callerx", "").
		"shifted boundary": Pseudonym(key, "callerx", ""),
	}
	for name, p := range others {
		if p[len(p)-32:] == got[len(got)-32:] {
			t.Fatalf("%s gives the same MAC", name)
		}
	}
	if p := Pseudonym(key, KindRecipient, "+15550100"); p[:len("recipient:")] != "recipient:" {
		t.Fatalf("recipient pseudonym %q", p)
	}
}
