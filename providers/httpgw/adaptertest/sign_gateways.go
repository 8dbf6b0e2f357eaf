package adaptertest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"switchboard/providers/httpgw"
)

// signGateway signs for the ed25519, slack, mailgun, plivo-v3 and basic schemes, each as its
// gateway documents it. A timestamp, token or nonce the callback already carries is kept, so
// that sending the same section twice is a replay. It returns the body to send (mailgun writes
// the signature into it).
func (s signer) signGateway(r *http.Request, body []byte, n int, ts string) ([]byte, error) {
	switch s.cfg.Kind {
	case httpgw.VerifierEd25519:
		priv, ok := s.priv.(ed25519.PrivateKey)
		if !ok {
			return nil, errors.New("signing ed25519 callbacks needs setup.yaml privateKey (PKCS #8 Ed25519)")
		}
		sigHeader, tsHeader := orDefault(s.cfg.SignatureHeader, httpgw.Ed25519SignatureHeader), orDefault(s.cfg.TimestampHeader, httpgw.Ed25519TimestampHeader)
		if r.Header.Get(tsHeader) == "" {
			r.Header.Set(tsHeader, ts)
		}
		msg := append([]byte(r.Header.Get(tsHeader)+"|"), body...)
		r.Header.Set(sigHeader, base64.StdEncoding.EncodeToString(ed25519.Sign(priv, msg)))
	case httpgw.VerifierSlack:
		if r.Header.Get(httpgw.SlackTimestampHeader) == "" {
			r.Header.Set(httpgw.SlackTimestampHeader, ts)
		}
		base := "v0:" + r.Header.Get(httpgw.SlackTimestampHeader) + ":" + string(body)
		r.Header.Set(httpgw.SlackSignatureHeader, "v0="+hex.EncodeToString(hmacSum(sha256.New, s.cfg.Secret, []byte(base))))
	case httpgw.VerifierMailgun:
		return s.signMailgun(r, body, n, ts)
	case httpgw.VerifierPlivoV3:
		return body, s.signPlivo(r, body, n)
	case httpgw.VerifierBasic:
		r.SetBasicAuth(s.cfg.Username, s.cfg.Password)
	}
	return body, nil
}

// signMailgun writes {timestamp, token, signature} into the JSON body's signature member, or
// the three form fields of a legacy form webhook, keeping a timestamp and token already there.
func (s signer) signMailgun(r *http.Request, body []byte, n int, ts string) ([]byte, error) {
	token := "adaptertest-token-" + strconv.Itoa(n)
	sign := func(timestamp, token string) string {
		return hex.EncodeToString(hmacSum(sha256.New, s.cfg.Secret, []byte(timestamp+token)))
	}
	if isForm(r.Header.Get("Content-Type")) {
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errors.New("mailgun: the form body does not parse")
		}
		if form.Get("timestamp") == "" {
			form.Set("timestamp", ts)
		}
		if form.Get("token") == "" {
			form.Set("token", token)
		}
		form.Set("signature", sign(form.Get("timestamp"), form.Get("token")))
		return []byte(form.Encode()), nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil || doc == nil {
		return nil, errors.New("mailgun: the body is not a JSON object")
	}
	var sig map[string]any
	if raw, ok := doc["signature"]; ok {
		if err := json.Unmarshal(raw, &sig); err != nil {
			return nil, errors.New("mailgun: the signature member is not an object")
		}
	}
	if sig == nil {
		sig = map[string]any{}
	}
	timestamp, _ := sig["timestamp"].(string)
	if timestamp == "" {
		timestamp = ts
	}
	if t, _ := sig["token"].(string); t != "" {
		token = t
	}
	sig["timestamp"], sig["token"], sig["signature"] = timestamp, token, sign(timestamp, token)
	raw, _ := json.Marshal(sig)
	doc["signature"] = raw
	return json.Marshal(doc)
}

// signPlivo adds a nonce (unless the callback has one) and the V3 signature of the configured
// URL, the request's query and the form parameters.
func (s signer) signPlivo(r *http.Request, body []byte, n int) error {
	if r.Header.Get(httpgw.PlivoNonceHeader) == "" {
		r.Header.Set(httpgw.PlivoNonceHeader, "adaptertest-nonce-"+strconv.Itoa(n))
	}
	u, err := url.Parse(s.cfg.URL)
	if err != nil {
		return errors.New("plivo-v3: the verifier url does not parse")
	}
	rawQuery := r.URL.RawQuery
	if rawQuery == "" {
		rawQuery = u.RawQuery
	}
	query, _ := url.ParseQuery(rawQuery)
	var post url.Values
	if len(strings.TrimSpace(string(body))) > 0 {
		if post, err = url.ParseQuery(string(body)); err != nil {
			return errors.New("plivo-v3: the form body does not parse")
		}
	}
	base := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
	signed := httpgw.PlivoSignedURL(base, query, post) + "." + r.Header.Get(httpgw.PlivoNonceHeader)
	r.Header.Set(httpgw.PlivoSignatureHeader, base64.StdEncoding.EncodeToString(hmacSum(sha256.New, s.cfg.Secret, []byte(signed))))
	return nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
