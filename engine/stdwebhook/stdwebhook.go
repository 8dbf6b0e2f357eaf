// Package stdwebhook signs and checks Standard Webhooks v1 signatures: HMAC-SHA256 over
// "id.timestamp.body", keyed with the secret written as whsec_ followed by the standard base64 of
// the key, sent as "v1,<base64 signature>" (several space-separated entries while keys rotate).
// docs/webhooks.md describes how Switchboard signs its events with it.
//
// It imports only the standard library, so that the event sender, the callback verifier and the
// local receivers of the dev stack and the benchmark share one implementation.
package stdwebhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// Header names of Standard Webhooks.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// Tolerance is how far a signed timestamp may lie from the receiver's clock, either way.
const Tolerance = 5 * time.Minute

// maxEntries bounds the signatures of one header a receiver compares.
const maxEntries = 16

// DecodeSecret returns the key of a whsec_<base64> secret, or false when s is not one.
func DecodeSecret(s string) ([]byte, bool) {
	b64, ok := strings.CutPrefix(s, "whsec_")
	if !ok {
		return nil, false
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) == 0 {
		return nil, false
	}
	return key, true
}

// EncodeSecret writes key in whsec_<base64> form.
func EncodeSecret(key []byte) string { return "whsec_" + base64.StdEncoding.EncodeToString(key) }

// MAC returns the raw HMAC-SHA256 of id.timestamp.body under key.
func MAC(key []byte, id, timestamp string, body []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(timestamp))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return mac.Sum(nil)
}

// Sign returns the webhook-timestamp (seconds of at) and webhook-signature header values of
// one delivery.
func Sign(key []byte, id string, at time.Time, body []byte) (timestamp, signature string) {
	timestamp = strconv.FormatInt(at.Unix(), 10)
	return timestamp, "v1," + base64.StdEncoding.EncodeToString(MAC(key, id, timestamp, body))
}

// AnyMatches reports whether one v1 entry of a webhook-signature header equals want. Every entry
// is compared (no early exit), so that timing does not tell which one matched; a header with
// more than 16 entries matches nothing.
func AnyMatches(header string, want []byte) bool {
	entries := strings.Fields(header)
	if len(entries) > maxEntries {
		return false
	}
	matched := false
	for _, entry := range entries {
		version, sig, ok := strings.Cut(entry, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.Strict().DecodeString(sig)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			matched = true
		}
	}
	return matched
}

// Check verifies one delivery's headers against key at now: the timestamp is decimal seconds
// within Tolerance of now, and a v1 signature matches. It returns a reason when it refuses.
func Check(key []byte, id, timestamp, signature string, body []byte, now time.Time) (ok bool, reason string) {
	if id == "" || timestamp == "" || signature == "" {
		return false, "a webhook-id, webhook-timestamp or webhook-signature header is missing"
	}
	if len(timestamp) > 12 || strings.Trim(timestamp, "0123456789") != "" {
		return false, "webhook-timestamp is not a decimal count of seconds"
	}
	secs, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return false, "webhook-timestamp is not a decimal count of seconds"
	}
	sent := time.Unix(secs, 0)
	if now.Sub(sent) > Tolerance || sent.Sub(now) > Tolerance {
		return false, "webhook-timestamp is outside the tolerance"
	}
	if !AnyMatches(signature, MAC(key, id, timestamp, body)) {
		return false, "no v1 signature matches"
	}
	return true, ""
}
