package adaptertest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/md5" // Vonage's md5hash and HMAC-MD5 signature methods.
	"crypto/rand"
	"crypto/sha1" // Twilio's HMAC-SHA1 and Vonage's HMAC-SHA1.
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"switchboard/providers/httpgw"
)

// signer signs callbacks the way each gateway does, with the case's test secrets. It is written
// from the gateways' documentation, apart from the verifiers, so that each checks the other.
type signer struct {
	cfg  *httpgw.VerifierConfig
	priv crypto.Signer // *ecdsa.PrivateKey or ed25519.PrivateKey, for the schemes that sign with one
}

// sign adds the signature of cfg's scheme to r (headers or parameters) and returns the body
// to send, which changes only for vonage-signature (sig and timestamp are parameters). n
// numbers the callback (for a generated webhook-id); now dates it unless the callback pins a
// timestamp itself.
func (s signer) sign(r *http.Request, body []byte, n int, now time.Time) ([]byte, error) {
	if s.cfg == nil {
		return nil, errors.New("the case asks to sign a callback but has no callbackVerifier")
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	switch s.cfg.Kind {
	case httpgw.VerifierHMACSHA256Body:
		mac := hmacSum(sha256.New, s.cfg.Secret, body)
		sig := hex.EncodeToString(mac)
		if strings.EqualFold(s.cfg.Encoding, "base64") {
			sig = base64.StdEncoding.EncodeToString(mac)
		}
		header := s.cfg.Header
		if header == "" {
			header = "x-signature"
		}
		r.Header.Set(header, sig)
	case httpgw.VerifierTwilio:
		return body, s.signTwilio(r, body)
	case httpgw.VerifierStandardWebhooks:
		id := r.Header.Get("webhook-id")
		if id == "" {
			id = "msg_adaptertest_" + strconv.Itoa(n)
			r.Header.Set("webhook-id", id)
		}
		if r.Header.Get("webhook-timestamp") == "" {
			r.Header.Set("webhook-timestamp", ts)
		}
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(string(s.cfg.Secret), "whsec_"))
		if err != nil {
			return nil, errors.New("setup.yaml secret is not whsec_<base64>")
		}
		signed := id + "." + r.Header.Get("webhook-timestamp") + "." + string(body)
		r.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(hmacSum(sha256.New, key, []byte(signed))))
	case httpgw.VerifierPathToken:
		// The token is the route's last segment; buildCallback adds it when the path lacks it.
	case httpgw.VerifierVonageSignature:
		return s.signVonage(r, body, ts)
	case httpgw.VerifierECDSAP256:
		priv, ok := s.priv.(*ecdsa.PrivateKey)
		if !ok {
			return nil, errors.New("signing ecdsa-p256 callbacks needs setup.yaml privateKey")
		}
		if r.Header.Get(httpgw.ECDSATimestampHeader) == "" {
			r.Header.Set(httpgw.ECDSATimestampHeader, ts)
		}
		sum := sha256.Sum256(append([]byte(r.Header.Get(httpgw.ECDSATimestampHeader)), body...))
		sig, err := ecdsa.SignASN1(rand.Reader, priv, sum[:])
		if err != nil {
			return nil, fmt.Errorf("ecdsa-p256: %w", err)
		}
		r.Header.Set(httpgw.ECDSASignatureHeader, base64.StdEncoding.EncodeToString(sig))
	case httpgw.VerifierEd25519, httpgw.VerifierSlack, httpgw.VerifierMailgun, httpgw.VerifierPlivoV3, httpgw.VerifierBasic:
		return s.signGateway(r, body, n, ts)
	default:
		return nil, fmt.Errorf("the runner cannot sign for verifier kind %q", s.cfg.Kind)
	}
	return body, nil
}

// signTwilio signs the public URL (with the request's query when the URL has none) followed by
// the sorted form fields; a body that is not a form is covered by bodySHA256 in the query.
func (s signer) signTwilio(r *http.Request, body []byte) error {
	if !isForm(r.Header.Get("Content-Type")) && len(body) > 0 {
		q := r.URL.Query()
		sum := sha256.Sum256(body)
		q.Set("bodySHA256", hex.EncodeToString(sum[:]))
		r.URL.RawQuery = q.Encode()
	}
	data := s.cfg.URL
	if !strings.Contains(data, "?") && r.URL.RawQuery != "" {
		data += "?" + r.URL.RawQuery
	}
	if isForm(r.Header.Get("Content-Type")) {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return errors.New("twilio: the form body does not parse")
		}
		names := make([]string, 0, len(form))
		for name := range form {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			values := append([]string(nil), form[name]...)
			sort.Strings(values)
			for _, v := range values {
				data += name + v
			}
		}
	}
	r.Header.Set("X-Twilio-Signature", base64.StdEncoding.EncodeToString(hmacSum(sha1.New, s.cfg.Secret, []byte(data))))
	return nil
}

// signVonage adds timestamp (unless the callback has one) and sig to the callback's parameters:
// to the form body, to the JSON object body, or to the query of a request without body.
func (s signer) signVonage(r *http.Request, body []byte, ts string) ([]byte, error) {
	params := map[string]string{}
	jsonBody := len(bytes.TrimSpace(body)) > 0 && !isForm(r.Header.Get("Content-Type"))
	switch {
	case jsonBody:
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil || obj == nil || dec.More() || !bytes.HasSuffix(bytes.TrimSpace(body), []byte("}")) {
			return nil, errors.New("vonage: the JSON body is not an object")
		}
		for k, v := range obj {
			if v != nil {
				params[k] = fmt.Sprint(v)
			}
		}
	case len(body) > 0:
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errors.New("vonage: the form body does not parse")
		}
		for k := range form {
			params[k] = form.Get(k)
		}
	default:
		for k := range r.URL.Query() {
			params[k] = r.URL.Query().Get(k)
		}
	}
	added := [][2]string{}
	if params["timestamp"] == "" {
		params["timestamp"] = ts
		added = append(added, [2]string{"timestamp", ts})
	}
	signed := httpgw.VonageSignedString(params)
	var sum []byte
	method := strings.ToLower(s.cfg.SignatureMethod)
	if method == httpgw.VonageMD5Hash {
		h := md5.Sum(append([]byte(signed), s.cfg.Secret...))
		sum = h[:]
	} else {
		hashes := map[string]func() hash.Hash{"md5": md5.New, "sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}
		if hashes[method] == nil {
			return nil, fmt.Errorf("vonage: unknown signature method %q", s.cfg.SignatureMethod)
		}
		sum = hmacSum(hashes[method], s.cfg.Secret, []byte(signed))
	}
	added = append(added, [2]string{"sig", hex.EncodeToString(sum)})
	switch {
	case jsonBody:
		trimmed := bytes.TrimSpace(body)
		out := bytes.TrimSpace(append([]byte(nil), trimmed[:len(trimmed)-1]...)) // without the object's "}"
		for _, kv := range added {
			k, _ := json.Marshal(kv[0])
			v, _ := json.Marshal(kv[1])
			if !bytes.HasSuffix(out, []byte("{")) {
				out = append(out, ',')
			}
			out = append(out, fmt.Sprintf("%s:%s", k, v)...)
		}
		return append(out, '}'), nil
	case len(body) > 0:
		for _, kv := range added {
			body = append(body, "&"+url.QueryEscape(kv[0])+"="+url.QueryEscape(kv[1])...)
		}
		return body, nil
	}
	q := r.URL.Query()
	for _, kv := range added {
		q.Set(kv[0], kv[1])
	}
	r.URL.RawQuery = q.Encode()
	return body, nil
}

func hmacSum(h func() hash.Hash, key, data []byte) []byte {
	m := hmac.New(h, key)
	m.Write(data)
	return m.Sum(nil)
}
