package httpgw

import (
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"hash"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVonageSignedString(t *testing.T) {
	t.Parallel()
	got := VonageSignedString(map[string]string{
		"sig": "ignored", "text": "a&b=c", "blank": " \t", "empty": "", "k=1": "v", "messageId": "0A00",
	})
	if want := "&k_1=v&messageId=0A00&text=a_b_c"; got != want {
		t.Fatalf("VonageSignedString = %q, want %q", got, want)
	}
}

func TestVonageVerifierReferenceVector(t *testing.T) {
	t.Parallel()
	// The md5hash vector of Vonage's Python SDK tests: a=1, b=2, timestamp=1461605396, secret "secret".
	const sig = "6af838ef94998832dbfc29020b564830"
	clock := newFakeClock()
	clock.now = time.Unix(1461605396, 0)
	for _, s := range []string{sig, strings.ToUpper(sig)} {
		v := mustVerifier(t, &VerifierConfig{Kind: VerifierVonageSignature, SignatureMethod: "md5hash", Secret: []byte("secret")}, clock)
		body := []byte("a=1&b=2&timestamp=1461605396&sig=" + s)
		if err := v.Verify(callbackRequest("/cb", "application/x-www-form-urlencoded", body), "", body); err != nil {
			t.Fatalf("reference vector (sig %s) refused: %v", s, err)
		}
	}
}

// vonageSign signs params with method, independently of the verifier's code.
func vonageSign(method string, secret []byte, params map[string]string) string {
	s := VonageSignedString(params)
	if method == VonageMD5Hash {
		sum := md5.Sum(append([]byte(s), secret...))
		return hex.EncodeToString(sum[:])
	}
	hashes := map[string]func() hash.Hash{"md5": md5.New, "sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}
	m := hmac.New(hashes[method], secret)
	m.Write([]byte(s))
	return strings.ToUpper(hex.EncodeToString(m.Sum(nil))) // SDKs emit upper case
}

func TestVonageVerifierMethodsAndBodies(t *testing.T) {
	t.Parallel()
	secret := []byte("vonage-signature-secret")
	clock := newFakeClock()
	ts := strconv.FormatInt(clock.Now().Unix(), 10)
	dlr := map[string]string{"messageId": "0A0000000123ABCD1", "status": "delivered", "err-code": "0",
		"msisdn": "447700900123", "message-timestamp": "2026-03-01 12:00:00", "nonce": "n-1", "timestamp": ts}
	for _, method := range []string{"md5hash", "md5", "sha1", "sha256", "sha512"} {
		params := map[string]string{}
		for k, v := range dlr {
			params[k] = v
		}
		params["sig"] = vonageSign(method, secret, params)
		form := url.Values{}
		for k, v := range params {
			form.Set(k, v)
		}
		// One verifier per request: the three carry one signature, and a second would be a replay.
		newV := func() Verifier {
			return mustVerifier(t, &VerifierConfig{Kind: VerifierVonageSignature, SignatureMethod: strings.ToUpper(method), Secret: secret}, clock)
		}
		v := newV()
		body := []byte(form.Encode())
		if err := v.Verify(callbackRequest("/cb", "application/x-www-form-urlencoded", body), "", body); err != nil {
			t.Errorf("%s form: %v", method, err)
		}
		jsonBody := []byte(`{"messageId":"0A0000000123ABCD1","status":"delivered","err-code":"0","msisdn":"447700900123",` +
			`"message-timestamp":"2026-03-01 12:00:00","nonce":"n-1","timestamp":` + ts + `,"price":null,"sig":"` + params["sig"] + `"}`)
		if err := newV().Verify(callbackRequest("/cb", "application/json", jsonBody), "", jsonBody); err != nil {
			t.Errorf("%s JSON: %v", method, err)
		}
		query := callbackRequest("/cb?"+form.Encode(), "", nil)
		if err := newV().Verify(query, "", nil); err != nil {
			t.Errorf("%s query: %v", method, err)
		}
	}
}

func TestVonageVerifierRefusals(t *testing.T) {
	t.Parallel()
	secret := []byte("vonage-signature-secret")
	base := newFakeClock().Now()
	ts := strconv.FormatInt(base.Unix(), 10)
	signed := func(params map[string]string) url.Values {
		params["sig"] = vonageSign("sha256", secret, params)
		form := url.Values{}
		for k, v := range params {
			form.Set(k, v)
		}
		return form
	}
	good := signed(map[string]string{"messageId": "A1", "status": "delivered", "timestamp": ts})
	tampered := signed(map[string]string{"messageId": "A1", "status": "delivered", "timestamp": ts})
	tampered.Set("status", "failed")
	repeated := signed(map[string]string{"messageId": "A1", "status": "delivered", "timestamp": ts})
	repeated.Add("status", "delivered")
	noTimestamp := signed(map[string]string{"messageId": "A1", "status": "delivered"})
	noSig := url.Values{"messageId": {"A1"}, "timestamp": {ts}}
	notHex := signed(map[string]string{"messageId": "A1", "timestamp": ts})
	notHex.Set("sig", "zz"+notHex.Get("sig")[2:])
	cases := []struct {
		name, target, contentType, body string
		now                             time.Time
	}{
		{"tampered value", "/cb", "application/x-www-form-urlencoded", tampered.Encode(), base},
		{"repeated parameter", "/cb", "application/x-www-form-urlencoded", repeated.Encode(), base},
		{"no timestamp", "/cb", "application/x-www-form-urlencoded", noTimestamp.Encode(), base},
		{"no sig", "/cb", "application/x-www-form-urlencoded", noSig.Encode(), base},
		{"sig not hex", "/cb", "application/x-www-form-urlencoded", notHex.Encode(), base},
		{"stale", "/cb", "application/x-www-form-urlencoded", good.Encode(), base.Add(5*time.Minute + time.Second)},
		{"from the future", "/cb", "application/x-www-form-urlencoded", good.Encode(), base.Add(-5*time.Minute - time.Second)},
		{"query and body", "/cb?tenant=a", "application/x-www-form-urlencoded", good.Encode(), base},
		{"nested JSON", "/cb", "application/json", `{"messageId":{"a":1},"timestamp":` + ts + `,"sig":"00"}`, base},
		{"text body", "/cb", "text/plain", good.Encode(), base},
		{"empty", "/cb", "", "", base},
	}
	for _, tc := range cases {
		clock := newFakeClock()
		clock.now = tc.now
		v := mustVerifier(t, &VerifierConfig{Kind: VerifierVonageSignature, SignatureMethod: "sha256", Secret: secret}, clock)
		body := []byte(tc.body)
		if err := v.Verify(callbackRequest(tc.target, tc.contentType, body), "", body); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	wrongSecret := mustVerifier(t, &VerifierConfig{Kind: VerifierVonageSignature, SignatureMethod: "sha256", Secret: []byte("other")}, newFakeClock())
	body := []byte(good.Encode())
	if err := wrongSecret.Verify(callbackRequest("/cb", "application/x-www-form-urlencoded", body), "", body); err == nil {
		t.Error("wrong secret accepted")
	}
	wrongMethod := mustVerifier(t, &VerifierConfig{Kind: VerifierVonageSignature, SignatureMethod: "sha512", Secret: secret}, newFakeClock())
	if err := wrongMethod.Verify(callbackRequest("/cb", "application/x-www-form-urlencoded", body), "", body); err == nil {
		t.Error("signature of another method accepted")
	}
}

func TestVonageVerifierRefusesReplays(t *testing.T) {
	t.Parallel()
	secret := []byte("vonage-signature-secret")
	clock := newFakeClock()
	v := mustVerifier(t, &VerifierConfig{Kind: VerifierVonageSignature, SignatureMethod: "md5hash", Secret: secret}, clock)
	request := func(ts int64, sigCase func(string) string) []byte {
		params := map[string]string{"messageId": "A1", "status": "delivered", "timestamp": strconv.FormatInt(ts, 10)}
		sig := sigCase(vonageSign("md5hash", secret, params))
		return []byte("messageId=A1&status=delivered&timestamp=" + params["timestamp"] + "&sig=" + sig)
	}
	first := request(clock.Now().Unix(), strings.ToLower)
	verify := func(body []byte) error {
		return v.Verify(callbackRequest("/cb", "application/x-www-form-urlencoded", body), "", body)
	}
	if err := verify(first); err != nil {
		t.Fatalf("first delivery refused: %v", err)
	}
	clock.Advance(time.Minute)
	if verify(first) == nil {
		t.Fatal("replay accepted")
	}
	if verify(request(clock.Now().Add(-time.Minute).Unix(), strings.ToUpper)) == nil {
		t.Fatal("replay with the signature in another case accepted")
	}
	if err := verify(request(clock.Now().Unix(), strings.ToLower)); err != nil {
		t.Fatalf("the sender's retry with a fresh timestamp refused: %v", err)
	}
}

func TestNewVonageVerifierRefusesBadConfigs(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]VerifierConfig{
		"no secret":      {Kind: VerifierVonageSignature, SignatureMethod: "sha256"},
		"no method":      {Kind: VerifierVonageSignature, Secret: []byte("s")},
		"unknown method": {Kind: VerifierVonageSignature, Secret: []byte("s"), SignatureMethod: "sha384"},
	} {
		if _, err := NewVerifier(&cfg, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestVonageVerifierTakesBlankParametersEitherWay: Vonage's Node library writes a blank
// parameter into the signed string ("&client-ref="), its Java library leaves it out; a callback
// signed either way verifies, and one whose blank parameter was given a value does not.
func TestVonageVerifierTakesBlankParametersEitherWay(t *testing.T) {
	t.Parallel()
	secret := []byte("vonage-signature-secret")
	clock := newFakeClock()
	ts := strconv.FormatInt(clock.Now().Unix(), 10)
	params := map[string]string{"messageId": "0A0000000123ABCD1", "status": "delivered", "client-ref": "", "timestamp": ts}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("&client-ref=&messageId=0A0000000123ABCD1&status=delivered&timestamp=" + ts))
	withBlank := hex.EncodeToString(m.Sum(nil))
	for name, tc := range map[string]struct {
		sig, clientRef string
		ok             bool
	}{
		"blank left out (Java)":    {vonageSign("sha256", secret, params), "", true},
		"blank written out (Node)": {withBlank, "", true},
		"blank given a value":      {withBlank, "x", false},
	} {
		form := url.Values{"sig": {tc.sig}, "client-ref": {tc.clientRef}}
		for k, v := range params {
			if k != "client-ref" {
				form.Set(k, v)
			}
		}
		v := mustVerifier(t, &VerifierConfig{Kind: VerifierVonageSignature, SignatureMethod: "sha256", Secret: secret}, clock)
		body := []byte(form.Encode())
		if err := v.Verify(callbackRequest("/cb", "application/x-www-form-urlencoded", body), "", body); (err == nil) != tc.ok {
			t.Errorf("%s: Verify = %v, want ok=%v", name, err, tc.ok)
		}
	}
}
