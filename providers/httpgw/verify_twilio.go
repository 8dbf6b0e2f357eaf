package httpgw

import (
	"crypto/hmac"
	"crypto/sha1" // Twilio signs with HMAC-SHA1, which SHA-1 collisions do not break.
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"switchboard/engine"
)

// twilioVerifier checks X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, over
// the public callback URL followed by every form field sorted by name as name then value.
//
// The signed URL is the configured one; when it has no query, the request's query is appended,
// since Twilio signs the URL exactly as it called it. A JSON callback carries bodySHA256 (hex
// SHA-256 of the body) in the query: the signature then covers the URL only and the body hash
// is checked apart. Any other body that the signature does not cover is refused.
type twilioVerifier struct {
	url   string
	token []byte
}

func newTwilioVerifier(cfg VerifierConfig, _ engine.Clock) (Verifier, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("auth token is empty")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("url must be the absolute public callback URL")
	}
	return &twilioVerifier{url: cfg.URL, token: append([]byte(nil), cfg.Secret...)}, nil
}

// Verify rebuilds the signed string and compares signatures in constant time.
func (v *twilioVerifier) Verify(r *http.Request, _ string, body []byte) error {
	values := r.Header.Values("X-Twilio-Signature")
	if len(values) != 1 {
		return fmt.Errorf("%w: want exactly one X-Twilio-Signature header, got %d", errUnverified, len(values))
	}
	got, err := base64.StdEncoding.Strict().DecodeString(strings.TrimSpace(values[0]))
	if err != nil {
		return fmt.Errorf("%w: X-Twilio-Signature is not base64", errUnverified)
	}
	signed := v.url
	if !strings.Contains(signed, "?") && r.URL.RawQuery != "" {
		signed += "?" + r.URL.RawQuery
	}
	var data strings.Builder
	data.WriteString(signed)
	switch {
	case isFormRequest(r):
		if err := appendSortedForm(&data, body); err != nil {
			return fmt.Errorf("%w: %w", errUnverified, err)
		}
	case r.URL.Query().Has("bodySHA256"):
		sum := sha256.Sum256(body)
		want := r.URL.Query().Get("bodySHA256")
		if !hmac.Equal([]byte(strings.ToLower(want)), []byte(hex.EncodeToString(sum[:]))) {
			return fmt.Errorf("%w: bodySHA256 mismatch", errUnverified)
		}
	case len(body) > 0:
		return fmt.Errorf("%w: body is neither form-encoded nor covered by bodySHA256", errUnverified)
	}
	mac := hmac.New(sha1.New, v.token)
	mac.Write([]byte(data.String()))
	if !hmac.Equal(got, mac.Sum(nil)) {
		return fmt.Errorf("%w: signature mismatch", errUnverified)
	}
	return nil
}

// appendSortedForm appends every form field of body sorted by name, repeated names with their
// values sorted, as name immediately followed by value.
func appendSortedForm(b *strings.Builder, body []byte) error {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return errors.New("form body does not parse")
	}
	names := make([]string, 0, len(form))
	for name := range form {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		vals := append([]string(nil), form[name]...)
		sort.Strings(vals)
		for _, val := range vals {
			b.WriteString(name)
			b.WriteString(val)
		}
	}
	return nil
}

// isFormRequest reports whether r carries an application/x-www-form-urlencoded body.
func isFormRequest(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/x-www-form-urlencoded"
}
