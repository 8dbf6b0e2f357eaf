package engine

import (
	"strings"
	"testing"
)

func TestChatAddressForm(t *testing.T) {
	t.Parallel()
	for address, want := range map[string]bool{
		"C0123ABCD":               true,
		"-1001234567890":          true,
		"19:abc@thread.tacv2":     true,
		"#ops room":               true,
		strings.Repeat("é", 256):  true,
		strings.Repeat("a", 257):  false,
		"":                        false,
		"line\nbreak":             false,
		"tab\there":               false,
		"nul\x00":                 false,
		"bad\xffutf8":             false,
		"zero\u200bwidth":         false, // a format character
		"paragraph\u2029sep":      false,
		strings.Repeat("€", 256):  true,
		strings.Repeat("€", 257):  false,
		"emoji 🚀":                 true,
		"non\u00a0breaking-space": false, // not the ASCII space
	} {
		if got := ValidChatAddress(address); got != want {
			t.Errorf("ValidChatAddress(%q) = %t, want %t", address, got, want)
		}
	}
}

func TestRecipientKindsOfChat(t *testing.T) {
	t.Parallel()
	kind, address, err := Recipient{Address: "C1"}.Kind()
	if err != nil || kind != RecipientAddress || address != "C1" {
		t.Fatalf("Kind = %q %q %v", kind, address, err)
	}
	if _, _, err := (Recipient{Address: "C1", Phone: "+15550100"}).Kind(); err == nil {
		t.Fatal("two members accepted")
	}
	if RecipientKindFor(ChannelChat) != RecipientAddress {
		t.Fatal("chat does not need an address")
	}
	err = CheckAddress(RecipientAddress, "secret\nC1")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("CheckAddress = %v (must refuse without echoing)", err)
	}
}
