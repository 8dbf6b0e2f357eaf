package httpgw

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"  // Vonage's legacy md5hash and HMAC-MD5 signature methods; the dashboard picks one.
	"crypto/sha1" // Vonage's HMAC-SHA1 signature method.
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"switchboard/engine"
)

// Signature methods of the vonage-signature verifier, named as the Vonage dashboard's
// "signature method" setting (which must match).
const (
	// VonageMD5Hash: MD5 of the signed string followed by the secret (the account default).
	VonageMD5Hash = "md5hash"
	// VonageMD5HMAC, VonageSHA1HMAC, VonageSHA256HMAC, VonageSHA512HMAC: HMAC of the signed
	// string keyed with the secret.
	VonageMD5HMAC    = "md5"
	VonageSHA1HMAC   = "sha1"
	VonageSHA256HMAC = "sha256"
	VonageSHA512HMAC = "sha512"
)

// vonageHMACs maps each HMAC signature method to its hash; md5hash is handled apart.
var vonageHMACs = map[string]func() hash.Hash{
	VonageMD5HMAC:    md5.New,
	VonageSHA1HMAC:   sha1.New,
	VonageSHA256HMAC: sha256.New,
	VonageSHA512HMAC: sha512.New,
}

// vonageReplayCapacity bounds the remembered signatures of one provider.
const vonageReplayCapacity = 1 << 16

// vonageVerifier checks the signed-callback scheme of the Vonage SMS API (delivery receipts and
// inbound SMS once signing is enabled on the account): the callback's parameters carry `sig`
// and `timestamp` (Unix seconds). Every other non-blank parameter, sorted by name, is written
// as "&name=value" with "&" and "=" inside names and values replaced by "_"; md5hash appends
// the signature secret and takes the MD5, the other methods take an HMAC keyed with it. The
// hex signature is compared case-insensitively (SDKs emit upper case), in constant time.
//
// The Messages API signs differently (a JWT in Authorization whose payload_hash covers the
// body). This verifier implements the SMS API's `sig` form because the SMS API is the gateway
// the example adapter drives and its receipts carry no JWT; the JWT form would be a separate
// kind.
//
// Parameters come from the form body, from a JSON object body (its top-level members; numbers
// and booleans as their JSON text, nulls skipped, nested values refused) or, for an empty
// body, from the query. Vonage leaves a request with both a query and a body undefined, so
// that is refused, as are repeated names. The timestamp must lie within WebhookTolerance of
// the clock either way, and a signature verified once is refused again until it leaves that
// window (replay); a sender's retry carries a fresh timestamp and so a fresh signature.
type vonageVerifier struct {
	secret []byte
	method string
	mac    func() hash.Hash // nil for md5hash
	clock  engine.Clock
	seen   *replayCache
}

func newVonageVerifier(cfg VerifierConfig, clock engine.Clock) (Verifier, error) {
	if len(cfg.Secret) == 0 {
		return nil, errors.New("signature secret is empty")
	}
	method := strings.ToLower(cfg.SignatureMethod)
	v := &vonageVerifier{secret: append([]byte(nil), cfg.Secret...), method: method, clock: clock,
		seen: newReplayCache(vonageReplayCapacity)}
	if method != VonageMD5Hash {
		if v.mac = vonageHMACs[method]; v.mac == nil {
			return nil, fmt.Errorf("signature method %q is not md5hash, md5, sha1, sha256 or sha512", cfg.SignatureMethod)
		}
	}
	return v, nil
}

// Verify collects the parameters, checks the timestamp window, recomputes the signature and
// consults the replay memory.
func (v *vonageVerifier) Verify(r *http.Request, _ string, body []byte) error {
	params, err := vonageParams(r, body)
	if err != nil {
		return fmt.Errorf("%w: %w", errUnverified, err)
	}
	sig := params["sig"]
	if sig == "" {
		return fmt.Errorf("%w: no sig parameter", errUnverified)
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return fmt.Errorf("%w: sig is not hex", errUnverified)
	}
	ts, err := parseUnixSeconds(params["timestamp"])
	if err != nil {
		return fmt.Errorf("%w: timestamp: %w", errUnverified, err)
	}
	now, sent := v.clock.Now(), time.Unix(ts, 0)
	if now.Sub(sent) > WebhookTolerance || sent.Sub(now) > WebhookTolerance {
		return fmt.Errorf("%w: timestamp is outside the %s window", errUnverified, WebhookTolerance)
	}
	want := v.digest(VonageSignedString(params))
	matched := hmac.Equal(got, want)
	if !matched && anyBlank(params) {
		// The same parameters signed with their blank ones written out, as Vonage's Node library signs.
		want = v.digest(vonageSignedString(params, true))
		matched = hmac.Equal(got, want)
	}
	if !matched {
		return fmt.Errorf("%w: signature mismatch", errUnverified)
	}
	if !v.seen.add(hex.EncodeToString(want), sent.Add(WebhookTolerance), now) {
		return fmt.Errorf("%w: signature already seen, or replay memory full", errUnverified)
	}
	return nil
}

// digest signs s with the configured method.
func (v *vonageVerifier) digest(s string) []byte {
	if v.mac == nil {
		h := md5.New()
		h.Write([]byte(s))
		h.Write(v.secret)
		return h.Sum(nil)
	}
	m := hmac.New(v.mac, v.secret)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// VonageSignedString builds the string the Vonage SMS API signs from a callback's parameters:
// every parameter but sig whose value is not blank, sorted by name, as "&name=value", with "&"
// and "=" in names and values replaced by "_". It is exported for signers in tests and tools.
func VonageSignedString(params map[string]string) string { return vonageSignedString(params, false) }

// vonageSignedString is VonageSignedString, with blank parameters written too ("&name=")
// when withBlanks is set: Vonage's Node library signs that way, its Java library and
// VonageSignedString leave them out, and the verifier takes either (docs/adapters.md).
func vonageSignedString(params map[string]string, withBlanks bool) string {
	names := make([]string, 0, len(params))
	for name, value := range params {
		if name != "sig" && (withBlanks || !isBlank(value)) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	clean := strings.NewReplacer("&", "_", "=", "_")
	var b strings.Builder
	for _, name := range names {
		b.WriteString("&")
		b.WriteString(clean.Replace(name))
		b.WriteString("=")
		b.WriteString(clean.Replace(params[name]))
	}
	return b.String()
}

// isBlank reports whether a parameter value holds nothing but spaces and control characters.
func isBlank(value string) bool {
	return strings.TrimFunc(value, func(r rune) bool { return r <= ' ' }) == ""
}

// anyBlank reports whether a parameter other than sig is blank.
func anyBlank(params map[string]string) bool {
	for name, value := range params {
		if name != "sig" && isBlank(value) {
			return true
		}
	}
	return false
}

// vonageParams returns the callback's parameters, one value per name.
func vonageParams(r *http.Request, body []byte) (map[string]string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return singleValues(r.URL.Query())
	}
	if r.URL.RawQuery != "" {
		return nil, errors.New("parameters in both the query and the body")
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errors.New("form body does not parse")
		}
		return singleValues(form)
	case JSONMediaType(mt) || mt == "" && json.Valid(body):
		return jsonParams(body)
	}
	return nil, fmt.Errorf("content type %q is neither form nor JSON", mt)
}

// singleValues flattens values, refusing a name given more than once.
func singleValues(values url.Values) (map[string]string, error) {
	out := make(map[string]string, len(values))
	for name, vals := range values {
		if len(vals) != 1 {
			return nil, fmt.Errorf("parameter %q is repeated", name)
		}
		out[name] = vals[0]
	}
	return out, nil
}

// jsonParams reads a JSON object's top-level members as parameters.
func jsonParams(body []byte) (map[string]string, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || dec.More() || obj == nil {
		return nil, errors.New("JSON body is not one object")
	}
	out := make(map[string]string, len(obj))
	for name, value := range obj {
		switch v := value.(type) {
		case nil:
		case string:
			out[name] = v
		case json.Number:
			out[name] = string(v)
		case bool:
			out[name] = fmt.Sprint(v)
		default:
			return nil, fmt.Errorf("JSON member %q is not a single value", name)
		}
	}
	return out, nil
}
