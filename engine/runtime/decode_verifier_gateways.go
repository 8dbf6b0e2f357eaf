package runtime

import (
	"net/url"
	"strings"
	"switchboard/engine/pubkey"
)

// Default headers of the ed25519 verifier: Telnyx's.
const (
	defaultEd25519SignatureHeader = "telnyx-signature-ed25519"
	defaultEd25519TimestampHeader = "telnyx-timestamp"
)

// callbackURLMember reads a verifier's required url: the absolute http or https callback URL
// exactly as the gateway calls it (twilio, plivo-v3 sign it).
func callbackURLMember(m *mapping) string {
	text := m.required("url")
	if text == "" {
		return ""
	}
	u, err := url.Parse(text)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || strings.Contains(text, "#") {
		m.fail("url", "must be the absolute http or https callback URL the gateway calls, without user information or fragment")
		return ""
	}
	return text
}

// decodeGatewayVerifier reads the members of the ed25519, slack, mailgun and basic verifiers
// into v (docs/runtime.md lists each scheme).
func (r *reader) decodeGatewayVerifier(m *mapping, v *Verifier) {
	switch v.Kind {
	case VerifierEd25519:
		v.SignatureHeader, v.TimestampHeader = defaultEd25519SignatureHeader, defaultEd25519TimestampHeader
		if m.has("signatureHeader") {
			v.SignatureHeader = headerName(m, "signatureHeader")
		}
		if m.has("timestampHeader") {
			v.TimestampHeader = headerName(m, "timestampHeader")
		}
		if key := m.secret("publicKeyRef", true); !key.IsZero() {
			raw, ok := ed25519PublicKey(key.value)
			if !ok {
				m.fail("publicKeyRef", "must be an Ed25519 public key: the base64 of its 32 bytes (as Telnyx shows it), "+
					"or a PEM PUBLIC KEY block")
			}
			v.PublicKey = raw
		}
	case VerifierSlack, VerifierMailgun:
		v.Secret = r.textSecret(m, "secretRef")
	case VerifierBasic:
		v.Username = r.textSecret(m, "usernameRef")
		v.Password = r.textSecret(m, "passwordRef")
		if strings.Contains(string(v.Username.value), ":") {
			m.fail("usernameRef", "the user name of basic authentication must not hold a colon")
			v.Username = Secret{}
		}
	}
}

// ed25519PublicKey reads an Ed25519 public key written as the base64 of its 32 bytes, as the
// base64 of a DER SubjectPublicKeyInfo, or as a PEM PUBLIC KEY block, and returns its 32 bytes.
func ed25519PublicKey(b []byte) ([]byte, bool) {
	key, err := pubkey.Ed25519(b)
	return []byte(key), err == nil
}
