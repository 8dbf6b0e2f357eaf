package httpgw

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"switchboard/engine"
)

// Headers of Plivo's signature V3.
const (
	PlivoSignatureHeader   = "X-Plivo-Signature-V3"
	PlivoMainAccountHeader = "X-Plivo-Signature-Ma-V3"
	PlivoNonceHeader       = "X-Plivo-Signature-V3-Nonce"
)

// plivoReplayCapacity bounds the remembered nonces of one provider.
const plivoReplayCapacity = 1 << 16

// plivoVerifier checks Plivo's signature V3: the base64 HMAC-SHA256, keyed with the auth token,
// of the signed URL, a "." and the X-Plivo-Signature-V3-Nonce value. The signed URL is built
// as Plivo documents and its SDKs do (docs.plivo.com, "Signature validation-V3"):
//
//   - start from the callback URL's scheme, host and path (the configured url, since behind a
//     proxy the request's own host differs); the request's query (Plivo appends a GET
//     callback's parameters to it), or when it has none the configured url's, supplies the
//     query parameters;
//   - GET: append "?" and the query parameters sorted by name, "name=value" joined with "&"
//     (the values of a repeated name sorted too), when there are any;
//   - POST with form parameters: append "?", the sorted query as for GET, a "." when that query
//     is not empty, then every form parameter sorted by name (case-sensitive), each as name
//     immediately followed by value (the values of a repeated name sorted);
//   - POST without form parameters: as GET.
//
// X-Plivo-Signature-V3 (the account's or subaccount's token) and X-Plivo-Signature-Ma-V3 (the
// main account's) may each hold several comma-separated signatures; the request passes when
// any entry of either matches. Every entry is compared, in constant time.
//
// V3 carries no timestamp. Plivo makes the nonce unique for every request, so a verified nonce
// is remembered for WebhookTolerance and a second request with it within that time is refused
// (a replay); beyond that window a replay cannot be told from a new request. Only form and
// empty bodies are covered by the signature: a callback with another body is refused.
type plivoVerifier struct {
	base  *url.URL // scheme, host and path of the signed URL
	query string   // the configured URL's raw query, used when the request has none
	token []byte
	clock engine.Clock
	seen  *replayCache
}

func newPlivoVerifier(cfg VerifierConfig, clock engine.Clock) (Verifier, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("auth token is empty")
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return nil, errors.New("url must be the absolute public callback URL")
	}
	base := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return &plivoVerifier{base: base, query: u.RawQuery, token: append([]byte(nil), cfg.Secret...), clock: clock,
		seen: newReplayCache(plivoReplayCapacity)}, nil
}

// Verify rebuilds the signed URL, compares every signature entry, then consults the nonces seen.
func (v *plivoVerifier) Verify(r *http.Request, _ string, body []byte) error {
	nonce, err := singleHeader(r, PlivoNonceHeader)
	if err != nil {
		return err
	}
	if len(nonce) > 256 {
		return fmt.Errorf("%w: %s is too long", errUnverified, PlivoNonceHeader)
	}
	var entries []string
	for _, h := range []string{PlivoSignatureHeader, PlivoMainAccountHeader} {
		for _, value := range r.Header.Values(h) {
			entries = append(entries, strings.Split(value, ",")...)
		}
	}
	if len(entries) == 0 || len(entries) > 16 {
		return fmt.Errorf("%w: want 1 to 16 signatures in %s or %s", errUnverified, PlivoSignatureHeader, PlivoMainAccountHeader)
	}
	var post url.Values
	switch {
	case len(bytes.TrimSpace(body)) == 0:
	case isFormRequest(r) && r.Method == http.MethodPost:
		if post, err = url.ParseQuery(string(body)); err != nil {
			return fmt.Errorf("%w: form body does not parse", errUnverified)
		}
	default:
		return fmt.Errorf("%w: only a form-encoded POST body is covered by the V3 signature", errUnverified)
	}
	rawQuery := r.URL.RawQuery
	if rawQuery == "" {
		rawQuery = v.query
	}
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return fmt.Errorf("%w: the query does not parse", errUnverified)
	}
	mac := hmac.New(sha256.New, v.token)
	mac.Write([]byte(PlivoSignedURL(v.base.String(), query, post)))
	mac.Write([]byte{'.'})
	mac.Write([]byte(nonce))
	want := mac.Sum(nil)
	matched := false
	for _, entry := range entries {
		got, err := base64.StdEncoding.DecodeString(strings.TrimSpace(entry))
		if err == nil && hmac.Equal(got, want) {
			matched = true
		}
	}
	if !matched {
		return fmt.Errorf("%w: no signature matches", errUnverified)
	}
	if !v.seen.add(nonce, v.clock.Now().Add(WebhookTolerance), v.clock.Now()) {
		return fmt.Errorf("%w: nonce already seen, or replay memory full", errUnverified)
	}
	return nil
}

// PlivoSignedURL builds the URL Plivo's signature V3 signs (before ".nonce") from the callback
// URL without its query (base), the query parameters and the POST form parameters (nil or
// empty for a GET or a POST without them). It is exported for signers in tests and tools.
func PlivoSignedURL(base string, query, post url.Values) string {
	var b strings.Builder
	b.WriteString(base)
	sortedQuery := joinSorted(query, "=", "&")
	if len(post) == 0 {
		if sortedQuery != "" {
			b.WriteString("?" + sortedQuery)
		}
		return b.String()
	}
	b.WriteString("?" + sortedQuery)
	if sortedQuery != "" {
		b.WriteString(".")
	}
	b.WriteString(joinSorted(post, "", ""))
	return b.String()
}

// joinSorted writes every name and value of values, names sorted and each name's values
// sorted, as name+between+value, entries separated by sep.
func joinSorted(values url.Values, between, sep string) string {
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	sort.Strings(names)
	var parts []string
	for _, name := range names {
		vals := append([]string(nil), values[name]...)
		sort.Strings(vals)
		for _, val := range vals {
			parts = append(parts, name+between+val)
		}
	}
	return strings.Join(parts, sep)
}
