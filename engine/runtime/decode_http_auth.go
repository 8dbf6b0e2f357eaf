package runtime

import (
	"crypto/x509"
	"maps"
	"slices"
	"strings"

	"switchboard/engine/pubkey"
)

// httpAuthKeys are the members of an http provider's authentication, by kind.
var httpAuthKeys = map[string][]string{
	AuthNone:                    {"kind"},
	AuthBasic:                   {"kind", "usernameRef", "passwordRef"},
	AuthStaticAuthorization:     {"kind", "scheme", "tokenRef"},
	AuthStaticAPIKey:            {"kind", "header", "tokenRef"},
	AuthOAuth2ClientCredentials: {"kind", "tokenUrl", "clientId", "clientSecretRef", "scopes"},
	AuthAWSSigV4:                {"kind", "service", "region", "accessKeyIdRef", "secretAccessKeyRef", "sessionTokenRef"},
	AuthPathToken:               {"kind", "prefix", "tokenRef"},
	AuthGoogleServiceAccount:    {"kind", "serviceAccountRef", "scopes"},
	AuthAPNsToken:               {"kind", "keyRef", "keyId", "teamId"},
}

// verifierKeys are the members of a callback verifier, by kind.
var verifierKeys = map[string][]string{
	VerifierHMACSHA256Body:   {"kind", "header", "encoding", "secretRef"},
	VerifierTwilio:           {"kind", "url", "secretRef"},
	VerifierStandardWebhooks: {"kind", "secretRef"},
	VerifierPathToken:        {"kind", "tokenRef"},
	VerifierVonageSignature:  {"kind", "signatureMethod", "secretRef"},
	VerifierECDSAP256:        {"kind", "publicKey"},
	VerifierEd25519:          {"kind", "signatureHeader", "timestampHeader", "publicKeyRef"},
	VerifierSlack:            {"kind", "secretRef"},
	VerifierMailgun:          {"kind", "secretRef"},
	VerifierPlivoV3:          {"kind", "url", "secretRef"},
	VerifierBasic:            {"kind", "usernameRef", "passwordRef"},
}

// minPathTokenBytes keeps a path token out of guessing range.
const minPathTokenBytes = 16

// notText explains why textSecret refused a secret, without showing it.
const notText = "the secret must be printable text without line breaks or surrounding white space " +
	"(secret files are used verbatim: remove a trailing newline)"

// decodeHTTPAuth reads an http provider's authentication of the given kind. baseKnown says
// the baseUrl was valid; loopback that it names a loopback host.
func (r *reader) decodeHTTPAuth(m *mapping, kind string, baseKnown, loopback bool) HTTPAuth {
	a := HTTPAuth{Kind: kind}
	switch kind {
	case AuthNone:
		if baseKnown && !loopback {
			m.fail("kind", "none is allowed only towards a loopback baseUrl")
		}
	case AuthBasic:
		a.Username = r.textSecret(m, "usernameRef")
		a.Password = r.textSecret(m, "passwordRef")
		if strings.Contains(string(a.Username.value), ":") {
			m.fail("usernameRef", "the user name of basic authentication must not hold a colon")
			a.Username = Secret{}
		}
	case AuthStaticAuthorization:
		a.Scheme = "Bearer"
		if s := m.str("scheme"); s != "" {
			if !isToken(s) {
				m.fail("scheme", "must be an authorization scheme such as Bearer (an HTTP token)")
			}
			a.Scheme = s
		}
		a.Token = r.textSecret(m, "tokenRef")
	case AuthStaticAPIKey:
		a.Header = headerName(m, "header")
		a.Token = r.textSecret(m, "tokenRef")
	case AuthAWSSigV4:
		r.decodeSigV4(m, &a)
	case AuthPathToken:
		a.Prefix = m.str("prefix")
		if !isPathSegment(a.Prefix) {
			m.fail("prefix", "must be at most 64 letters, digits, '.', '_', '~' or '-'")
		}
		a.Token = r.textSecret(m, "tokenRef")
		if !a.Token.IsZero() && !isTokenSegment(a.Token.value) {
			m.fail("tokenRef", "the token must be 8 to 256 characters that a URL path segment holds as they are "+
				"(letters, digits and -._~:@!$&'()*+,;=)")
			a.Token = Secret{}
		}
	case AuthGoogleServiceAccount:
		r.decodeServiceAccount(m, &a)
	case AuthAPNsToken:
		r.decodeAPNsToken(m, &a)
	case AuthOAuth2ClientCredentials:
		if text := m.required("tokenUrl"); text != "" {
			u, reason := parseRemoteURL(text)
			if reason != "" {
				m.fail("tokenUrl", "%s", reason)
			}
			a.TokenURL = u
		}
		a.ClientID = m.required("clientId")
		a.ClientSecret = r.textSecret(m, "clientSecretRef")
		a.Scopes = scopes(m)
	}
	return a
}

// scopes reads an optional list of OAuth 2.0 scopes, each without white space, quotes or
// backslashes.
func scopes(m *mapping) []string {
	list := m.strings("scopes")
	for i, s := range list {
		if strings.ContainsAny(s, " \t\r\n\"\\") {
			m.fail("scopes", "scope %d must not hold white space, quotes or backslashes", i)
		}
	}
	return list
}

// textSecret resolves a required secret that must be printable text: a credential that goes
// into an HTTP header or form, or a shared HMAC secret. A stray trailing newline is caught
// here, at load, instead of failing every send or every callback later.
func (r *reader) textSecret(m *mapping, key string) Secret {
	s := m.secret(key, true)
	if !s.IsZero() && !isPrintableText(s.value) {
		m.fail(key, "%s", notText)
		return Secret{}
	}
	return s
}

// headerName reads a required HTTP header name, lower-cased, refusing headers the HTTP client
// owns.
func headerName(m *mapping, key string) string {
	h := strings.ToLower(m.required(key))
	switch {
	case h == "":
	case !isToken(h):
		m.fail(key, "must be an HTTP header name")
		return ""
	case contains(reservedHeaders, h) || strings.HasPrefix(h, "proxy-"):
		m.fail(key, "names a header the HTTP client owns")
		return ""
	}
	return h
}

// decodeVerifier reads a callback verifier of the given kind.
func (r *reader) decodeVerifier(m *mapping, kind string) *Verifier {
	v := &Verifier{Kind: kind}
	switch kind {
	case VerifierHMACSHA256Body:
		v.Header = headerName(m, "header")
		v.Encoding = "hex"
		switch e := m.str("encoding"); e {
		case "", "hex":
		case "base64":
			v.Encoding = e
		default:
			m.fail("encoding", "must be hex or base64")
		}
		v.Secret = r.textSecret(m, "secretRef")
	case VerifierTwilio, VerifierPlivoV3:
		v.URL = callbackURLMember(m)
		v.Secret = r.textSecret(m, "secretRef")
	case VerifierStandardWebhooks:
		v.Secret = r.textSecret(m, "secretRef")
		if !v.Secret.IsZero() {
			if _, ok := decodeWebhookSecret(v.Secret.value); !ok {
				m.fail("secretRef", "the secret must be whsec_ followed by standard base64")
				v.Secret = Secret{}
			}
		}
	case VerifierPathToken:
		v.Token = r.textSecret(m, "tokenRef")
		if !v.Token.IsZero() && (len(v.Token.value) < minPathTokenBytes || !isURLPathToken(v.Token.value)) {
			m.fail("tokenRef", "the token must be at least %d characters of A-Z, a-z, 0-9, -, ., _ and ~", minPathTokenBytes)
			v.Token = Secret{}
		}
	case VerifierVonageSignature:
		if method := strings.ToLower(m.required("signatureMethod")); method != "" {
			if !contains(vonageSignatureMethods, method) {
				m.fail("signatureMethod", "must be one of %s (the Vonage dashboard's signature method)", strings.Join(vonageSignatureMethods, ", "))
			} else {
				v.SignatureMethod = method
			}
		}
		v.Secret = r.textSecret(m, "secretRef")
	case VerifierEd25519, VerifierSlack, VerifierMailgun, VerifierBasic:
		r.decodeGatewayVerifier(m, v)
	case VerifierECDSAP256:
		if text := m.required("publicKey"); text != "" {
			der, reason := p256PublicKey(text)
			if reason != "" {
				m.fail("publicKey", "%s", reason)
			}
			v.PublicKey = der
		}
	}
	return v
}

// p256PublicKey reads an ECDSA P-256 public key written as the base64 of a DER
// SubjectPublicKeyInfo (how SendGrid shows its verification key) or as a PEM PUBLIC KEY block,
// and returns its DER, or a reason it is refused.
func p256PublicKey(text string) ([]byte, string) {
	const want = "must be an ECDSA P-256 public key: the base64 of a DER SubjectPublicKeyInfo, or a PEM PUBLIC KEY block"
	key, err := pubkey.P256([]byte(text))
	if err != nil {
		if strings.Contains(err.Error(), "PEM block") {
			return nil, want + " (not a certificate)"
		}
		return nil, want
	}
	der, err := x509.MarshalPKIXPublicKey(key)
	if err != nil {
		return nil, want
	}
	return der, ""
}

// isPathSegment reports whether s is at most 64 unreserved URL characters (RFC 3986).
func isPathSegment(s string) bool {
	return len(s) <= 64 && alnumOr(s, "-._~")
}

// isTokenSegment reports whether b is 8 to 256 characters that a URL path segment holds
// without escaping (RFC 3986 pchar without '%'), such as a Telegram bot token 123456:ABC-DEF….
func isTokenSegment(b []byte) bool {
	return len(b) >= 8 && len(b) <= 256 && alnumOr(string(b), "-._~:@!$&'()*+,;=")
}

// alnumOr reports whether every byte of s is an ASCII letter, a digit or one of extra.
func alnumOr(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

// VerifierKinds lists the callback verifier kinds the runtime file accepts, sorted. The http
// provider implements each one (a test of the wiring holds the two lists together).
func VerifierKinds() []string { return slices.Sorted(maps.Keys(verifierKeys)) }
