package httpgw

import (
	"crypto/hmac"
	"crypto/sha1" // Twilio signs with HMAC-SHA1, which SHA-1 collisions do not break.
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"switchboard/engine"
)

// twilioVerifier checks X-Twilio-Signature: base64 HMAC-SHA1, keyed with the auth token, over
// the public callback URL followed by every form field sorted by name as name then value. A
// webhook signed with a SharedKey says so in X-Twilio-Webhooks-Signature-Settings
// (key=<id>,algorithm=HMAC_SHA1 or HMAC_SHA256): the same string is then signed with the
// algorithm it names, keyed with the SharedKey's secret, which is then the configured secret.
//
// The signed URL is the configured one; when it has no query, the request's query is appended,
// since Twilio signs the URL exactly as it called it. Twilio's back end signs some callbacks
// over the URL with the scheme's default port written out (https://host:443/...) and others
// without it, so both forms of the configured URL are tried, and nothing looser: another
// scheme, host, port, path or query is still refused. A JSON callback carries bodySHA256 (hex
// SHA-256 of the body) in the query: the signature then covers the URL only and the body hash
// is checked apart. Any other body that the signature does not cover is refused.
type twilioVerifier struct {
	// urls is the configured URL as written, then the same URL with the default port added or
	// removed.
	urls  []string
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
	urls := []string{cfg.URL}
	if alt, ok := toggleDefaultPort(cfg.URL, u); ok {
		urls = append(urls, alt)
	}
	return &twilioVerifier{urls: urls, token: append([]byte(nil), cfg.Secret...)}, nil
}

// defaultPorts are the ports a scheme implies when its URL names none.
var defaultPorts = map[string]string{"http": "80", "https": "443"}

// toggleDefaultPort returns raw (parsed as u) with the scheme's default port written out when
// it names no port, or left out when it names the default one; false when it names another.
// Everything but the authority is kept byte for byte.
func toggleDefaultPort(raw string, u *url.URL) (string, bool) {
	def := defaultPorts[u.Scheme]
	start := strings.Index(raw, "://") + len("://")
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/?#"); i >= 0 {
		end = start + i
	}
	authority := raw[start:end]
	switch u.Port() {
	case "":
		if strings.HasSuffix(authority, ":") {
			return raw[:end] + def + raw[end:], true
		}
		return raw[:end] + ":" + def + raw[end:], true
	case def:
		return raw[:end-len(":"+def)] + raw[end:], true
	}
	return "", false
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
	newHash, err := twilioAlgorithm(r)
	if err != nil {
		return err
	}
	var fields strings.Builder
	switch {
	case isFormRequest(r):
		if err := appendSortedForm(&fields, body); err != nil {
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
	matched := false
	for _, signed := range v.urls {
		if !strings.Contains(signed, "?") && r.URL.RawQuery != "" {
			signed += "?" + r.URL.RawQuery
		}
		mac := hmac.New(newHash, v.token)
		mac.Write([]byte(signed))
		mac.Write([]byte(fields.String()))
		// Every form is computed and compared, so that timing tells nothing of which matched.
		matched = hmac.Equal(got, mac.Sum(nil)) || matched
	}
	if !matched {
		return fmt.Errorf("%w: signature mismatch", errUnverified)
	}
	return nil
}

// twilioAlgorithm returns the hash of the HMAC the request says it is signed with: the
// algorithm member of X-Twilio-Webhooks-Signature-Settings, HMAC_SHA1 without one. Any other
// algorithm, or more than one settings header, is refused.
func twilioAlgorithm(r *http.Request) (func() hash.Hash, error) {
	settings := r.Header.Values("X-Twilio-Webhooks-Signature-Settings")
	if len(settings) > 1 {
		return nil, fmt.Errorf("%w: more than one X-Twilio-Webhooks-Signature-Settings header", errUnverified)
	}
	algorithm := ""
	if len(settings) == 1 {
		for _, part := range strings.Split(settings[0], ",") {
			if name, value, ok := strings.Cut(part, "="); ok && strings.TrimSpace(name) == "algorithm" && strings.TrimSpace(value) != "" {
				algorithm = strings.ToUpper(strings.TrimSpace(value))
				break
			}
		}
	}
	switch algorithm {
	case "", "HMAC_SHA1":
		return sha1.New, nil
	case "HMAC_SHA256":
		return sha256.New, nil
	}
	return nil, fmt.Errorf("%w: unsupported signature algorithm %q", errUnverified, algorithm)
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
