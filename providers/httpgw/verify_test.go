package httpgw

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// callbackRequest builds a callback request with headers (name, value pairs).
func callbackRequest(target, contentType string, body []byte, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, strings.NewReader(string(body)))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

func mustVerifier(t *testing.T, cfg *VerifierConfig, clock engine.Clock) Verifier {
	t.Helper()
	v, err := NewVerifier(cfg, clock)
	if err != nil {
		t.Fatalf("NewVerifier: %v", err)
	}
	return v
}

func TestHMACBodyVerifier(t *testing.T) {
	t.Parallel()
	secret := []byte("callback-secret")
	body := []byte(`{"id":"gw-1","status":"delivered"}`)
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	sum := mac.Sum(nil)
	hexSig, b64Sig := hex.EncodeToString(sum), base64.StdEncoding.EncodeToString(sum)
	other := hmacHex(secret, []byte(`{"id":"gw-1","status":"undelivered"}`))

	hexV := mustVerifier(t, &VerifierConfig{Kind: VerifierHMACSHA256Body, Secret: secret}, nil)
	b64V := mustVerifier(t, &VerifierConfig{Kind: VerifierHMACSHA256Body, Header: "X-Hub-Signature-256", Encoding: "base64", Secret: secret}, nil)
	cases := []struct {
		name    string
		v       Verifier
		headers []string
		ok      bool
	}{
		{"hex", hexV, []string{"x-signature", hexSig}, true},
		{"hex upper case", hexV, []string{"x-signature", strings.ToUpper(hexSig)}, true},
		{"hex with sha256= prefix", hexV, []string{"x-signature", "sha256=" + hexSig}, true},
		{"base64", b64V, []string{"X-Hub-Signature-256", b64Sig}, true},
		{"base64 with prefix, unpadded", b64V, []string{"X-Hub-Signature-256", "sha256=" + strings.TrimRight(b64Sig, "=")}, true},
		{"base64 sent to a hex verifier", hexV, []string{"x-signature", b64Sig}, false},
		{"hex sent to a base64 verifier", b64V, []string{"X-Hub-Signature-256", hexSig}, false},
		{"signature of another body", hexV, []string{"x-signature", other}, false},
		{"bad signature", hexV, []string{"x-signature", strings.Repeat("0", 64)}, false},
		{"truncated signature", hexV, []string{"x-signature", hexSig[:62]}, false},
		{"missing header", hexV, nil, false},
		{"two headers", hexV, []string{"x-signature", hexSig, "x-signature", hexSig}, false},
		{"wrong header", hexV, []string{"x-signature-256", hexSig}, false},
	}
	for _, tc := range cases {
		err := tc.v.Verify(callbackRequest("/cb", "application/json", body, tc.headers...), "", body)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestTwilioVerifierDocsVector(t *testing.T) {
	t.Parallel()
	// The example of Twilio's request validation documentation.
	v := mustVerifier(t, &VerifierConfig{Kind: VerifierTwilio, URL: "https://mycompany.com/myapp.php?foo=1&bar=2", Secret: []byte("12345")}, nil)
	body := []byte("CallSid=CA1234567890ABCDE&Caller=%2B14158675309&Digits=1234&From=%2B14158675309&To=%2B18005551212")
	// The route the API sees may differ from the public URL (a proxy in front); the configured one is signed.
	signed := func(sig string) *http.Request {
		return callbackRequest("/v1/provider-callbacks/twilio?foo=1&bar=2", "application/x-www-form-urlencoded", body, "X-Twilio-Signature", sig)
	}
	if err := v.Verify(signed("RSOYDt4T1cUTdK1PDd93/VVr8B8="), "", body); err != nil {
		t.Fatalf("docs vector refused: %v", err)
	}
	for _, altered := range []string{"RSOYDt4T1cUTdK1PDd93/VVr8C8=", "RSOYDt4T1cUTdK1PDd93/VVr8B9=", "RSOYDt4T1cUTdK1PDd93/VVr8B8"} {
		if err := v.Verify(signed(altered), "", body); err == nil {
			t.Fatalf("altered signature %q accepted", altered)
		}
	}
	tampered := []byte(strings.Replace(string(body), "Digits=1234", "Digits=9999", 1))
	if err := v.Verify(signed("RSOYDt4T1cUTdK1PDd93/VVr8B8="), "", tampered); err == nil {
		t.Fatal("tampered form accepted")
	}
	if err := v.Verify(callbackRequest("/cb", "application/x-www-form-urlencoded", body), "", body); err == nil {
		t.Fatal("missing signature accepted")
	}
}

func TestTwilioVerifierAppendsTheRequestQueryAndChecksJSONBodies(t *testing.T) {
	t.Parallel()
	token := []byte("auth-token")
	v := mustVerifier(t, &VerifierConfig{Kind: VerifierTwilio, URL: "https://gw.example/v1/provider-callbacks/twilio", Secret: token}, nil)
	sign := func(data string) string {
		m := hmac.New(sha1.New, token)
		m.Write([]byte(data))
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	form := []byte("MessageStatus=delivered&MessageSid=SM1&B=2&B=1")
	data := "https://gw.example/v1/provider-callbacks/twilio?x=1" + "B1B2MessageSidSM1MessageStatusdelivered"
	r := callbackRequest("/v1/provider-callbacks/twilio?x=1", "application/x-www-form-urlencoded", form, "X-Twilio-Signature", sign(data))
	if err := v.Verify(r, "", form); err != nil {
		t.Fatalf("form with query refused: %v", err)
	}

	jsonBody := []byte(`{"MessageSid":"SM1","MessageStatus":"delivered"}`)
	sum := sha256.Sum256(jsonBody)
	target := "/v1/provider-callbacks/twilio?bodySHA256=" + hex.EncodeToString(sum[:])
	signedURL := "https://gw.example" + target
	r = callbackRequest(target, "application/json", jsonBody, "X-Twilio-Signature", sign(signedURL))
	if err := v.Verify(r, "", jsonBody); err != nil {
		t.Fatalf("JSON body with bodySHA256 refused: %v", err)
	}
	other := []byte(`{"MessageSid":"SM1","MessageStatus":"failed"}`)
	if err := v.Verify(callbackRequest(target, "application/json", other, "X-Twilio-Signature", sign(signedURL)), "", other); err == nil {
		t.Fatal("JSON body not matching bodySHA256 accepted")
	}
	plain := "https://gw.example/v1/provider-callbacks/twilio"
	if err := v.Verify(callbackRequest("/v1/provider-callbacks/twilio", "application/json", jsonBody, "X-Twilio-Signature", sign(plain)), "", jsonBody); err == nil {
		t.Fatal("JSON body not covered by any signature accepted")
	}
}

// TestTwilioVerifierTakesTheDefaultPortEitherWay: Twilio signs some callbacks over the URL with
// the scheme's default port written out and some without; either form of the configured URL is
// accepted, and no other URL.
func TestTwilioVerifierTakesTheDefaultPortEitherWay(t *testing.T) {
	t.Parallel()
	token := []byte("auth-token")
	form := []byte("MessageSid=SM1&MessageStatus=delivered")
	sign := func(url string) string {
		m := hmac.New(sha1.New, token)
		m.Write([]byte(url + "MessageSidSM1MessageStatusdelivered"))
		return base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	cases := []struct {
		configured, signed string
		ok                 bool
	}{
		{"https://gw.example/v1/provider-callbacks/twilio", "https://gw.example/v1/provider-callbacks/twilio", true},
		{"https://gw.example/v1/provider-callbacks/twilio", "https://gw.example:443/v1/provider-callbacks/twilio", true},
		{"https://gw.example:443/v1/provider-callbacks/twilio", "https://gw.example/v1/provider-callbacks/twilio", true},
		{"https://gw.example:443/v1/provider-callbacks/twilio", "https://gw.example:443/v1/provider-callbacks/twilio", true},
		{"http://gw.example/v1/provider-callbacks/twilio", "http://gw.example:80/v1/provider-callbacks/twilio", true},
		{"http://gw.example:80/v1/provider-callbacks/twilio", "http://gw.example/v1/provider-callbacks/twilio", true},
		{"https://user:pw@gw.example/cb?x=1", "https://user:pw@gw.example:443/cb?x=1", true},
		{"https://[2001:db8::1]/cb", "https://[2001:db8::1]:443/cb", true},
		{"https://gw.example:8443/cb", "https://gw.example:8443/cb", true},
		// Nothing looser.
		{"https://gw.example:8443/cb", "https://gw.example/cb", false},
		{"https://gw.example:8443/cb", "https://gw.example:443/cb", false},
		{"https://gw.example/cb", "https://gw.example:80/cb", false},
		{"http://gw.example/cb", "http://gw.example:443/cb", false},
		{"https://gw.example/cb", "http://gw.example/cb", false},
		{"https://gw.example/cb", "http://gw.example:443/cb", false},
		{"https://gw.example/cb", "https://gw.example:8443/cb", false},
		{"https://gw.example/cb", "https://other.example:443/cb", false},
		{"https://gw.example/cb", "https://gw.example:443/cb/", false},
		{"https://gw.example/cb", "https://gw.example:443/cb?x=1", false},
		{"https://gw.example/cb?x=1", "https://gw.example:443/cb?x=2", false},
	}
	for _, tc := range cases {
		v := mustVerifier(t, &VerifierConfig{Kind: VerifierTwilio, URL: tc.configured, Secret: token}, nil)
		r := callbackRequest("/v1/provider-callbacks/twilio", "application/x-www-form-urlencoded", form, "X-Twilio-Signature", sign(tc.signed))
		if err := v.Verify(r, "", form); (err == nil) != tc.ok {
			t.Errorf("configured %s, signed over %s: Verify = %v, want ok=%v", tc.configured, tc.signed, err, tc.ok)
		}
	}
}

// TestTwilioVerifierSharedKeyAlgorithms: a webhook signed with a SharedKey names its algorithm
// in X-Twilio-Webhooks-Signature-Settings; HMAC_SHA256 and HMAC_SHA1 are checked with the
// configured secret, and an algorithm we do not know is refused.
func TestTwilioVerifierSharedKeyAlgorithms(t *testing.T) {
	t.Parallel()
	secret := []byte("shared-key-secret")
	url := "https://gw.example/v1/provider-callbacks/twilio"
	v := mustVerifier(t, &VerifierConfig{Kind: VerifierTwilio, URL: url, Secret: secret}, nil)
	form := []byte("MessageSid=SM1&MessageStatus=delivered")
	data := []byte(url + "MessageSidSM1MessageStatusdelivered")
	sha1Sig := hmac.New(sha1.New, secret)
	sha1Sig.Write(data)
	sha256Sig := hmac.New(sha256.New, secret)
	sha256Sig.Write(data)
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	cases := []struct {
		name    string
		headers []string
		ok      bool
	}{
		{"sha256", []string{"X-Twilio-Signature", b64(sha256Sig.Sum(nil)), "X-Twilio-Webhooks-Signature-Settings", "key=webhooks_sharedkey_1,algorithm=HMAC_SHA256"}, true},
		{"sha1 named", []string{"X-Twilio-Signature", b64(sha1Sig.Sum(nil)), "X-Twilio-Webhooks-Signature-Settings", "key=webhooks_sharedkey_1, algorithm=HMAC_SHA1"}, true},
		{"sha1 without settings", []string{"X-Twilio-Signature", b64(sha1Sig.Sum(nil))}, true},
		{"sha256 without settings", []string{"X-Twilio-Signature", b64(sha256Sig.Sum(nil))}, false},
		{"sha1 signature, sha256 named", []string{"X-Twilio-Signature", b64(sha1Sig.Sum(nil)), "X-Twilio-Webhooks-Signature-Settings", "algorithm=HMAC_SHA256"}, false},
		{"unknown algorithm", []string{"X-Twilio-Signature", b64(sha256Sig.Sum(nil)), "X-Twilio-Webhooks-Signature-Settings", "algorithm=HMAC_SHA512"}, false},
		{"two settings headers", []string{"X-Twilio-Signature", b64(sha256Sig.Sum(nil)), "X-Twilio-Webhooks-Signature-Settings", "algorithm=HMAC_SHA256", "X-Twilio-Webhooks-Signature-Settings", "algorithm=HMAC_SHA256"}, false},
	}
	for _, tc := range cases {
		r := callbackRequest("/v1/provider-callbacks/twilio", "application/x-www-form-urlencoded", form, tc.headers...)
		if err := v.Verify(r, "", form); (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// standardWebhooksVector is the test vector of the Standard Webhooks reference libraries.
var standardWebhooksVector = struct {
	secret, id, body, sig string
	ts                    int64
}{"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_p5jXN8AQM9LWM0D4loKWxJek", `{"test": 2432232314}`, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", 1614265330}

func webhookRequest(id, ts, sig string, body []byte) *http.Request {
	return callbackRequest("/cb", "application/json", body, "webhook-id", id, "webhook-timestamp", ts, "webhook-signature", sig)
}

func TestStandardWebhooksVerifier(t *testing.T) {
	t.Parallel()
	vec := standardWebhooksVector
	sent := time.Unix(vec.ts, 0)
	ts := strconv.FormatInt(vec.ts, 10)
	body := []byte(vec.body)
	cases := []struct {
		name      string
		now       time.Time
		id, sig   string
		body      []byte
		ok        bool
		secretAlt string
	}{
		{"reference vector", sent, vec.id, vec.sig, body, true, ""},
		{"4m59s late", sent.Add(4*time.Minute + 59*time.Second), vec.id, vec.sig, body, true, ""},
		{"stale", sent.Add(5*time.Minute + time.Second), vec.id, vec.sig, body, false, ""},
		{"future", sent.Add(-5*time.Minute - time.Second), vec.id, vec.sig, body, false, ""},
		{"rotation: second entry matches", sent, vec.id, "v1,AAAA v1a,xyz " + vec.sig, body, true, ""},
		{"only a v1a entry", sent, vec.id, "v1a," + strings.TrimPrefix(vec.sig, "v1,"), body, false, ""},
		{"signature of another body", sent, vec.id, vec.sig, []byte(`{"test": 1}`), false, ""},
		{"another id", sent, "msg_other", vec.sig, body, false, ""},
		{"secret without prefix", sent, vec.id, vec.sig, body, true, strings.TrimPrefix(vec.secret, "whsec_")},
		{"wrong secret", sent, vec.id, vec.sig, body, false, "whsec_" + base64.StdEncoding.EncodeToString([]byte("another secret of 24 b"))},
	}
	for _, tc := range cases {
		clock := newFakeClock()
		clock.now = tc.now
		secret := vec.secret
		if tc.secretAlt != "" {
			secret = tc.secretAlt
		}
		v := mustVerifier(t, &VerifierConfig{Kind: VerifierStandardWebhooks, Secret: []byte(secret)}, clock)
		err := v.Verify(webhookRequest(tc.id, ts, tc.sig, tc.body), "", tc.body)
		if (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

// TestStandardWebhooksTakesSvixHeaderNames: the svix- names of the three headers verify as the
// webhook- ones do; a request mixing the two sets, or carrying both whole, is refused, and a
// replay under the other naming is still a replay.
func TestStandardWebhooksTakesSvixHeaderNames(t *testing.T) {
	t.Parallel()
	vec := standardWebhooksVector
	ts := strconv.FormatInt(vec.ts, 10)
	body := []byte(vec.body)
	cases := []struct {
		name    string
		headers []string
		ok      bool
	}{
		{"svix names", []string{"svix-id", vec.id, "svix-timestamp", ts, "svix-signature", vec.sig}, true},
		{"Svix capitalised", []string{"Svix-Id", vec.id, "Svix-Timestamp", ts, "Svix-Signature", vec.sig}, true},
		{"svix, wrong signature", []string{"svix-id", vec.id, "svix-timestamp", ts, "svix-signature", "v1,AAAA"}, false},
		{"svix, missing signature", []string{"svix-id", vec.id, "svix-timestamp", ts}, false},
		{"mixed: svix id", []string{"svix-id", vec.id, "webhook-timestamp", ts, "webhook-signature", vec.sig}, false},
		{"mixed: svix signature", []string{"webhook-id", vec.id, "webhook-timestamp", ts, "svix-signature", vec.sig}, false},
		{"both sets whole", []string{"webhook-id", vec.id, "webhook-timestamp", ts, "webhook-signature", vec.sig,
			"svix-id", vec.id, "svix-timestamp", ts, "svix-signature", vec.sig}, false},
		{"both sets, one stray svix header", []string{"webhook-id", vec.id, "webhook-timestamp", ts, "webhook-signature", vec.sig, "svix-id", vec.id}, false},
	}
	for _, tc := range cases {
		clock := newFakeClock()
		clock.now = time.Unix(vec.ts, 0)
		v := mustVerifier(t, &VerifierConfig{Kind: VerifierStandardWebhooks, Secret: []byte(vec.secret)}, clock)
		if err := v.Verify(callbackRequest("/cb", "application/json", body, tc.headers...), "", body); (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
	clock := newFakeClock()
	clock.now = time.Unix(vec.ts, 0)
	v := mustVerifier(t, &VerifierConfig{Kind: VerifierStandardWebhooks, Secret: []byte(vec.secret)}, clock)
	if err := v.Verify(webhookRequest(vec.id, ts, vec.sig, body), "", body); err != nil {
		t.Fatalf("webhook- names refused: %v", err)
	}
	svix := callbackRequest("/cb", "application/json", body, "svix-id", vec.id, "svix-timestamp", ts, "svix-signature", vec.sig)
	if err := v.Verify(svix, "", body); err == nil {
		t.Fatal("a replay under the svix- names accepted")
	}
}

func TestStandardWebhooksRefusesReplays(t *testing.T) {
	t.Parallel()
	secret := []byte("whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef01234567")))
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(string(secret), "whsec_"))
	sign := func(id, ts string, body []byte) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	clock := newFakeClock()
	v := mustVerifier(t, &VerifierConfig{Kind: VerifierStandardWebhooks, Secret: secret}, clock)
	body := []byte(`{"id":"gw-1","status":"delivered"}`)
	ts := strconv.FormatInt(clock.Now().Unix(), 10)
	req := func(id, ts string) *http.Request { return webhookRequest(id, ts, sign(id, ts, body), body) }

	if err := v.Verify(req("evt_1", ts), "", body); err != nil {
		t.Fatalf("first delivery refused: %v", err)
	}
	if err := v.Verify(req("evt_1", ts), "", body); err == nil {
		t.Fatal("replayed request accepted")
	}
	clock.Advance(2 * time.Minute)
	if err := v.Verify(req("evt_1", ts), "", body); err == nil {
		t.Fatal("replay within the window accepted")
	}
	// The sender's own retry of the event: same id, fresh timestamp and signature.
	retryTS := strconv.FormatInt(clock.Now().Unix(), 10)
	if err := v.Verify(req("evt_1", retryTS), "", body); err != nil {
		t.Fatalf("sender retry with a fresh timestamp refused: %v", err)
	}
	// Past the window the entry is forgotten, and the timestamp check refuses the replay.
	clock.Advance(4 * time.Minute)
	if err := v.Verify(req("evt_1", ts), "", body); err == nil {
		t.Fatal("stale replay accepted")
	}
	nowTS := strconv.FormatInt(clock.Now().Unix(), 10)
	if err := v.Verify(req("evt_2", nowTS), "", body); err != nil {
		t.Fatalf("new event refused: %v", err)
	}
	if n := v.(*standardWebhooksVerifier).seen.size(); n != 2 {
		t.Fatalf("replay memory holds %d entries, want 2 (the expired one evicted)", n)
	}
}

func TestReplayCacheIsBoundedAndFailsClosed(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c := newReplayCache(2)
	if !c.add("a", now.Add(time.Minute), now) || !c.add("b", now.Add(2*time.Minute), now) {
		t.Fatal("adds under capacity refused")
	}
	if c.add("c", now.Add(time.Minute), now) {
		t.Fatal("add over capacity accepted")
	}
	if c.add("a", now.Add(time.Minute), now) {
		t.Fatal("duplicate accepted")
	}
	later := now.Add(time.Minute) // "a" is forgotten now
	if !c.add("c", later.Add(time.Minute), later) {
		t.Fatal("add refused after an entry expired")
	}
	if c.add("d", later.Add(time.Minute), later) {
		t.Fatal("add over capacity accepted after the eviction")
	}
	if c.size() != 2 {
		t.Fatalf("cache holds %d entries, want 2", c.size())
	}
}

func TestPathTokenVerifier(t *testing.T) {
	t.Parallel()
	v := mustVerifier(t, &VerifierConfig{Kind: VerifierPathToken, Token: "s3cr3t-token"}, nil)
	r := callbackRequest("/cb", "", nil)
	for token, ok := range map[string]bool{"s3cr3t-token": true, "s3cr3t-tokem": false, "s3cr3t": false, "": false, "s3cr3t-token-and-more": false} {
		if err := v.Verify(r, token, nil); (err == nil) != ok {
			t.Errorf("token %q: Verify = %v, want ok=%v", token, err, ok)
		}
	}
}

func TestNewVerifierRefusesBadConfigs(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]VerifierConfig{
		"unknown kind":             {Kind: "vonage-jwt"},
		"hmac without secret":      {Kind: VerifierHMACSHA256Body},
		"hmac with bad encoding":   {Kind: VerifierHMACSHA256Body, Secret: []byte("s"), Encoding: "base32"},
		"twilio without url":       {Kind: VerifierTwilio, Secret: []byte("s")},
		"twilio without token":     {Kind: VerifierTwilio, URL: "https://a.example/cb"},
		"webhooks secret not b64":  {Kind: VerifierStandardWebhooks, Secret: []byte("whsec_***")},
		"webhooks secret empty":    {Kind: VerifierStandardWebhooks, Secret: []byte("whsec_")},
		"path token without token": {Kind: VerifierPathToken},
	} {
		if _, err := NewVerifier(&cfg, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestVerifyCallbackLeaksNoDetail(t *testing.T) {
	t.Parallel()
	var observed []string
	cfg := baseConfig(t, "http://127.0.0.1:1/", quickstartAdapter)
	cfg.Observer = func(event, class string) { observed = append(observed, event+":"+class) }
	withNone := newTestProvider(t, cfg)
	cfg.Verifier = &VerifierConfig{Kind: VerifierHMACSHA256Body, Secret: []byte("k")}
	withHMAC := newTestProvider(t, cfg)
	body := []byte(`{}`)
	for _, p := range []*Provider{withNone, withHMAC} {
		err := p.VerifyCallback(callbackRequest("/cb", "application/json", body, "x-signature", "00"), "", body)
		if err != engine.ErrCallbackUnverified {
			t.Fatalf("VerifyCallback = %v, want exactly engine.ErrCallbackUnverified", err)
		}
	}
	good := callbackRequest("/cb", "application/json", body, "x-signature", hmacHex([]byte("k"), body))
	if err := withHMAC.VerifyCallback(good, "", body); err != nil {
		t.Fatalf("good signature: %v", err)
	}
	if !errors.Is(withNone.VerifyCallback(good, "", body), engine.ErrCallbackUnverified) {
		t.Fatal("a provider without a verifier accepted a callback")
	}
	if len(observed) != 3 || observed[0] != "callback:unverified" {
		t.Fatalf("observed %v", observed)
	}
}
