package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// Pseudonym kinds used in the audit journal.
const (
	KindCaller    = "caller"
	KindRecipient = "recipient"
)

// Pseudonym returns the keyed, irreversible name under which a value appears in the audit
// journal: kind, ":", and the hex of HMAC-SHA256(key, kind ‖ 0x00 ‖ value) truncated to 16
// bytes (32 hex characters), e.g. "caller:3f…". The same key, kind and value always give the same
// pseudonym; without the key it can neither be reversed nor recomputed from a guess. kind must
// not contain a NUL byte. key is the pseudonym sub-key derived from audit.keyRef.
func Pseudonym(key []byte, kind, value string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(kind))
	m.Write([]byte{0})
	m.Write([]byte(value))
	var sum [sha256.Size]byte
	mac := m.Sum(sum[:0])
	return kind + ":" + hex.EncodeToString(mac[:16])
}
