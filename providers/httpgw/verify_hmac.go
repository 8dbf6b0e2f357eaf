package httpgw

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"switchboard/engine"
)

// hmacBodyVerifier checks an HMAC-SHA256 of the raw body carried in one header, hex or base64,
// with an optional "sha256=" prefix (GitHub style).
type hmacBodyVerifier struct {
	header string
	base64 bool
	secret []byte
}

func newHMACBodyVerifier(cfg VerifierConfig, _ engine.Clock) (Verifier, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("secret is empty")
	}
	v := &hmacBodyVerifier{header: cfg.Header, secret: append([]byte(nil), cfg.Secret...)}
	if v.header == "" {
		v.header = "x-signature"
	}
	switch strings.ToLower(cfg.Encoding) {
	case "", "hex":
	case "base64":
		v.base64 = true
	default:
		return nil, fmt.Errorf("encoding %q is not hex or base64", cfg.Encoding)
	}
	return v, nil
}

// Verify recomputes the HMAC over body and compares it in constant time.
func (v *hmacBodyVerifier) Verify(r *http.Request, _ string, body []byte) error {
	values := r.Header.Values(v.header)
	if len(values) != 1 {
		return fmt.Errorf("%w: want exactly one %s header, got %d", errUnverified, v.header, len(values))
	}
	got, err := v.decode(values[0])
	if err != nil {
		return fmt.Errorf("%w: %s: %w", errUnverified, v.header, err)
	}
	mac := hmac.New(sha256.New, v.secret)
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return fmt.Errorf("%w: signature mismatch", errUnverified)
	}
	return nil
}

// decode strips the optional prefix and decodes the signature in the configured encoding.
func (v *hmacBodyVerifier) decode(value string) ([]byte, error) {
	value = strings.TrimSpace(value)
	if len(value) > 7 && strings.EqualFold(value[:7], "sha256=") {
		value = value[7:]
	}
	if v.base64 {
		if b, err := base64.StdEncoding.Strict().DecodeString(value); err == nil {
			return b, nil
		}
		b, err := base64.RawStdEncoding.Strict().DecodeString(value)
		if err != nil {
			return nil, errors.New("not base64")
		}
		return b, nil
	}
	b, err := hex.DecodeString(value)
	if err != nil {
		return nil, errors.New("not hex")
	}
	return b, nil
}
