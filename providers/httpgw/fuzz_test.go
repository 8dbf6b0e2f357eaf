package httpgw

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// FuzzVerifyHMAC feeds arbitrary signature headers and bodies to both encodings. It must never
// panic, and it may accept only a header that carries the body's real HMAC under the key.
func FuzzVerifyHMAC(f *testing.F) {
	key := []byte("fuzz-key-the-fuzzer-does-not-know")
	body := []byte(`{"id":"gw-1","status":"delivered"}`)
	f.Add(hmacHex(key, body), body)
	f.Add("sha256="+hmacHex(key, body), body)
	f.Add(hmacHex(key, body)[:10], body)
	f.Add("", []byte{})
	f.Add("zz", []byte("\x00\xff"))
	hexV, _ := NewVerifier(&VerifierConfig{Kind: VerifierHMACSHA256Body, Secret: key}, nil)
	b64V, _ := NewVerifier(&VerifierConfig{Kind: VerifierHMACSHA256Body, Encoding: "base64", Secret: key}, nil)
	f.Fuzz(func(t *testing.T, header string, body []byte) {
		m := hmac.New(sha256.New, key)
		m.Write(body)
		sum := m.Sum(nil)
		r := callbackRequest("/cb", "application/json", body, "x-signature", header)
		if hexV.Verify(r, "", body) == nil && !strings.Contains(strings.ToLower(header), hmacHex(key, body)) {
			t.Fatalf("hex verifier accepted %q without the body's HMAC", header)
		}
		if b64V.Verify(r, "", body) == nil && !strings.Contains(header, base64.RawStdEncoding.EncodeToString(sum)) {
			t.Fatalf("base64 verifier accepted %q without the body's HMAC", header)
		}
	})
}

// FuzzVerifyStandardWebhooks feeds arbitrary webhook headers and bodies. It must never panic,
// and it may accept only a signature header that carries the real v1 signature.
func FuzzVerifyStandardWebhooks(f *testing.F) {
	vec := standardWebhooksVector
	ts := strconv.FormatInt(vec.ts, 10)
	f.Add(vec.id, ts, vec.sig, []byte(vec.body))
	f.Add(vec.id, ts, "v1,"+strings.Repeat("A", 44), []byte(vec.body))
	f.Add("a.b", ts, vec.sig, []byte{})
	f.Add(vec.id, "1614265330.0", vec.sig, []byte(vec.body))
	f.Add(vec.id, "-1", "v1a,x v1,", []byte(nil))
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(vec.secret, "whsec_"))
	f.Fuzz(func(t *testing.T, id, ts, sig string, body []byte) {
		clock := newFakeClock()
		clock.now = time.Unix(vec.ts, 0)
		v, err := NewVerifier(&VerifierConfig{Kind: VerifierStandardWebhooks, Secret: []byte(vec.secret)}, clock)
		if err != nil {
			t.Fatal(err)
		}
		r := callbackRequest("/cb", "application/json", body, "webhook-id", id, "webhook-timestamp", ts, "webhook-signature", sig)
		if v.Verify(r, "", body) != nil {
			return
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		if !strings.Contains(sig, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil))) {
			t.Fatalf("accepted id %q ts %q sig %q without the real signature", id, ts, sig)
		}
		if v.Verify(r, "", body) == nil {
			t.Fatal("the same request was accepted twice")
		}
	})
}

// FuzzParseReceipts runs arbitrary callback bodies through the quickstart receipt function.
// It must never panic; it returns receipts that are all well-formed, nothing, or an error
// wrapping ErrCallbackUnreadable.
func FuzzParseReceipts(f *testing.F) {
	f.Add("application/json", []byte(`{"id":"gw-1","status":"delivered"}`))
	f.Add("application/json", []byte(`[{"id":"gw-1","status":"sent"},{"id":"gw-2","status":"undelivered"}]`))
	f.Add("application/json", []byte(`{"id":{"x":1},"status":"delivered"}`))
	f.Add("application/x-www-form-urlencoded", []byte(`id=1&status=delivered`))
	f.Add("", []byte(`null`))
	f.Add("text/plain", []byte("\xff\xfe"))
	cfg := Config{ID: "fuzz", Source: quickstartAdapter, ReceiptsCallback: true, Auth: Auth{Kind: AuthNone}}
	cfg.BaseURL, _ = url.Parse("http://127.0.0.1:1/")
	p, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = p.Close() })
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		r := callbackRequest("/cb", "", body)
		r.Header.Set("Content-Type", contentType)
		got, err := p.ParseReceipts(context.Background(), r, body)
		if err != nil {
			if !errors.Is(err, engine.ErrCallbackUnreadable) {
				t.Fatalf("error %v does not wrap ErrCallbackUnreadable", err)
			}
			return
		}
		for _, rc := range got {
			if rc.ProviderReference == "" || (rc.Report != engine.ReportSent && rc.Report != engine.ReportDelivered && rc.Report != engine.ReportUndelivered) {
				t.Fatalf("ill-formed receipt %+v", rc)
			}
		}
	})
}
