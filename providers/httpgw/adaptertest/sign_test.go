package adaptertest

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/providers/httpgw"
)

// TestSignerSatisfiesEveryVerifier signs callbacks with the runner's signer and checks them
// with the real verifiers: each is written from the gateways' documentation apart from the
// other, so an agreement is evidence for both. A changed body must then be refused.
func TestSignerSatisfiesEveryVerifier(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	edPubKey, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	edPub := []byte(edPubKey)
	whsec := "whsec_" + base64.StdEncoding.EncodeToString([]byte("a test webhook secret!!!"))
	form, jsonCT := "application/x-www-form-urlencoded", "application/json"
	cases := []struct {
		name        string
		cfg         httpgw.VerifierConfig
		target, ct  string
		body        string
		tokenInPath bool
	}{
		{"hmac hex", httpgw.VerifierConfig{Kind: "hmac-sha256-body", Secret: []byte("s")}, "/cb", jsonCT, `{"id":"a"}`, false},
		{"hmac base64", httpgw.VerifierConfig{Kind: "hmac-sha256-body", Header: "x-sig", Encoding: "base64", Secret: []byte("s")}, "/cb", jsonCT, `{"id":"a"}`, false},
		{"twilio form", httpgw.VerifierConfig{Kind: "twilio", URL: "https://sb.example/v1/provider-callbacks/t", Secret: []byte("tok")}, "/cb?x=1", form, "MessageSid=SM1&MessageStatus=sent&B=2&B=1", false},
		{"twilio JSON", httpgw.VerifierConfig{Kind: "twilio", URL: "https://sb.example/v1/provider-callbacks/t", Secret: []byte("tok")}, "/cb", jsonCT, `{"MessageSid":"SM1"}`, false},
		{"standard webhooks", httpgw.VerifierConfig{Kind: "standard-webhooks", Secret: []byte(whsec)}, "/cb", jsonCT, `[{"type":"message.sent"}]`, false},
		{"path token", httpgw.VerifierConfig{Kind: "path-token", Token: "a-long-path-token-0123"}, "/v1/provider-callbacks/gw", jsonCT, `{}`, true},
		{"vonage form", httpgw.VerifierConfig{Kind: "vonage-signature", SignatureMethod: "md5hash", Secret: []byte("sig")}, "/cb", form, "messageId=0A1&status=delivered&text=a%26b%3Dc", false},
		{"vonage JSON", httpgw.VerifierConfig{Kind: "vonage-signature", SignatureMethod: "sha512", Secret: []byte("sig")}, "/cb", jsonCT, `{"messageId": "0A1", "err-code": 0, "status": "delivered"}`, false},
		{"vonage empty JSON object", httpgw.VerifierConfig{Kind: "vonage-signature", SignatureMethod: "sha1", Secret: []byte("sig")}, "/cb", jsonCT, `{ }`, false},
		{"vonage query", httpgw.VerifierConfig{Kind: "vonage-signature", SignatureMethod: "sha256", Secret: []byte("sig")}, "/cb?messageId=0A1&status=delivered", "", "", false},
		{"ecdsa", httpgw.VerifierConfig{Kind: "ecdsa-p256", PublicKey: pub}, "/cb", jsonCT, `[{"event":"delivered"}]`, false},
		{"ed25519", httpgw.VerifierConfig{Kind: "ed25519", PublicKey: edPub}, "/cb", jsonCT, `{"data":{"id":"1"}}`, false},
		{"ed25519 own headers", httpgw.VerifierConfig{Kind: "ed25519", PublicKey: edPub, SignatureHeader: "x-s", TimestampHeader: "x-t"}, "/cb", jsonCT, `{"id":"1"}`, false},
		{"slack", httpgw.VerifierConfig{Kind: "slack", Secret: []byte("slack-secret")}, "/cb", jsonCT, `{"type":"event_callback","id":"1"}`, false},
		{"mailgun JSON", httpgw.VerifierConfig{Kind: "mailgun", Secret: []byte("key-1")}, "/cb", jsonCT, `{"event-data":{"event":"delivered","id":"1"}}`, false},
		{"mailgun form", httpgw.VerifierConfig{Kind: "mailgun", Secret: []byte("key-1")}, "/cb", form, `event=delivered&id=1`, false},
		{"plivo form", httpgw.VerifierConfig{Kind: "plivo-v3", URL: "https://sb.example/v1/provider-callbacks/p", Secret: []byte("tok")}, "/cb?x=1", form, "MessageUUID=1&Status=delivered&B=2&B=1", false},
		{"plivo without query", httpgw.VerifierConfig{Kind: "plivo-v3", URL: "https://sb.example/v1/provider-callbacks/p", Secret: []byte("tok")}, "/cb", form, "MessageUUID=1&Status=delivered", false},
		{"basic", httpgw.VerifierConfig{Kind: "basic", Username: "u", Password: "p"}, "/cb", jsonCT, `{"id":"1"}`, false},
	}
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := &caseClock{now: now}
			v, err := httpgw.NewVerifier(&tc.cfg, clock)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, tc.target, nil)
			if tc.ct != "" {
				r.Header.Set("Content-Type", tc.ct)
			}
			cfg := tc.cfg
			if cfg.Kind == "path-token" {
				cfg.Secret = []byte(cfg.Token)
			}
			var priv crypto.Signer = key
			if cfg.Kind == "ed25519" {
				priv = edKey
			}
			body, err := signer{cfg: &cfg, priv: priv}.sign(r, []byte(tc.body), 1, now)
			if err != nil {
				t.Fatal(err)
			}
			token := ""
			if tc.tokenInPath {
				token = tc.cfg.Token // buildCallback puts it in the route
			}
			if err := v.Verify(r, token, body); err != nil {
				t.Fatalf("signed callback refused: %v (body %s, query %s)", err, body, r.URL.RawQuery)
			}
			// A path token, Basic credentials and Mailgun's signature (timestamp and token only)
			// do not cover the body: those schemes cannot refuse a changed one.
			bodyUnsigned := tc.tokenInPath || tc.cfg.Kind == "basic" || tc.cfg.Kind == "mailgun"
			if len(body) > 0 && !bodyUnsigned {
				changed := bytes.Replace(body, []byte("1"), []byte("2"), 1)
				if bytes.Equal(changed, body) {
					changed = append(changed, ' ')
				}
				v2, _ := httpgw.NewVerifier(&tc.cfg, clock)
				if err := v2.Verify(r, token, changed); err == nil {
					t.Fatalf("a changed body passed: %s", changed)
				}
			}
		})
	}
}

func TestLedgerFollowsTheStoreContract(t *testing.T) {
	t.Parallel()
	l := newLedger()
	early := l.receive([]engine.Receipt{{ProviderReference: "R1", Report: engine.ReportDelivered}, {ProviderReference: "other", Report: engine.ReportSent}})
	if early != (tally{unmatched: 2}) || l.report != engine.ReportNone {
		t.Fatalf("before the send: %+v, report %s", early, l.report)
	}
	l.recordOutcome(engine.Outcome{Class: engine.OutcomeTransient, ProviderReference: "R1"})
	if l.report != engine.ReportNone || len(l.kept) != 2 {
		t.Fatalf("a transient outcome applied receipts: %+v", l)
	}
	l.recordOutcome(engine.Outcome{Class: engine.OutcomeAccepted, ProviderReference: "R1", Report: engine.ReportNone})
	if l.report != engine.ReportDelivered || len(l.kept) != 1 || l.kept[0].ProviderReference != "other" {
		t.Fatalf("after the accepted outcome: %+v", l)
	}
	got := l.receive([]engine.Receipt{
		{ProviderReference: "R1", Report: engine.ReportSent},
		{ProviderReference: "r1", Report: engine.ReportUndelivered, Code: "x"},
		{ProviderReference: "R1", Report: engine.ReportUndelivered, Code: "y"},
	})
	if got != (tally{stale: 2, unmatched: 1}) || l.report != engine.ReportDelivered || l.code != "" {
		t.Fatalf("after late receipts: %+v, ledger %+v", got, l)
	}
}
