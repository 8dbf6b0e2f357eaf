package mockpush_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/providers/httpgw"
	"switchboard/providers/httpgw/mockpush"
)

// start runs a mock of protocol and writes its certificate to a file a provider trusts.
func start(t *testing.T, protocol mockpush.Protocol) (*mockpush.Server, string) {
	t.Helper()
	s := mockpush.New(mockpush.Options{Protocol: protocol})
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, s.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	return s, ca
}

// provider builds the bundled adapter of examples/adapters/NAME against s, with the credential
// s made, as the dev runtime file wires it.
func provider(t *testing.T, name string, s *mockpush.Server, ca string) *httpgw.Provider {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "examples", "adapters", name)
	src, err := os.ReadFile(filepath.Join(dir, "adapter.js"))
	if err != nil {
		t.Fatal(err)
	}
	secret, err := s.SecretFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg := httpgw.Config{ID: name, Source: string(src), TrustedCAFile: ca}
	switch name {
	case "fcm":
		cfg.BaseURL, _ = url.Parse(s.URL() + "/v1/")
		cfg.RequestHeaders = []string{"content-type"}
		cfg.Parameters = map[string]string{"project": "switchboard-dev"}
		cfg.Auth = httpgw.Auth{Kind: httpgw.AuthGoogleServiceAccount, ServiceAccount: secret,
			Scopes: []string{"https://www.googleapis.com/auth/firebase.messaging"}}
	case "apns":
		cfg.BaseURL, _ = url.Parse(s.URL() + "/")
		cfg.HTTP2 = true
		cfg.RequestHeaders = []string{"content-type", "apns-id", "apns-topic", "apns-push-type", "apns-priority"}
		cfg.ResponseHeaders = []string{"apns-id"}
		cfg.Parameters = map[string]string{"topic": "org.example.switchboard"}
		cfg.Auth = httpgw.Auth{Kind: httpgw.AuthAPNsToken, Key: secret, KeyID: mockpush.KeyID, TeamID: mockpush.TeamID}
	}
	p, err := httpgw.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func push(token string) *engine.Outbound {
	return &engine.Outbound{MessageID: "0192f3a0-5b1c-7d2e-8f3a-4b5c6d7e8f90", Generation: 1, Attempt: 1,
		Channel: engine.ChannelPush, Recipient: token,
		Parts:         map[string]string{"title": "Case closed", "body": "Your case is closed.", "data": `{"caseId":"CASE-7"}`},
		SenderProfile: engine.SenderProfileView{ID: "app-push", Channel: engine.ChannelPush}}
}

// TestBundledAdaptersThroughTheMocks: each bundled push adapter, with its real credential kind
// (a service account's grant exchanged for a token; an ES256 provider token over HTTP/2), gets
// a notification accepted, and a dead token refused with the device marked unregistered.
func TestBundledAdaptersThroughTheMocks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		protocol mockpush.Protocol
		deadCode string
	}{
		{"fcm", mockpush.FCM, "fcm.unregistered"},
		{"apns", mockpush.APNs, "apns.unregistered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, ca := start(t, tc.protocol)
			p := provider(t, tc.name, s, ca)
			ctx := context.Background()
			for range 3 {
				if o := p.Send(ctx, push("a1b2c3d4")); o.Class != engine.OutcomeAccepted || o.ProviderReference == "" {
					t.Fatalf("send: %+v", o)
				}
			}
			o := p.Send(ctx, push(mockpush.DeadPrefix+"-a1b2"))
			if o.Class != engine.OutcomePermanent || o.Code != tc.deadCode || !o.DeviceUnregistered {
				t.Fatalf("dead token: %+v", o)
			}
			sent := s.Sent()
			if len(sent) != 3 || sent[0].Token != "a1b2c3d4" || sent[0].Title != "Case closed" || sent[0].Body != "Your case is closed." {
				t.Fatalf("the mock took %+v", sent)
			}
			if tc.protocol == mockpush.FCM && sent[0].Data["caseId"] != "CASE-7" {
				t.Fatalf("data %v", sent[0].Data)
			}
		})
	}
}

// TestMocksRefuseWhatTheGatewaysRefuse: APNs refuses a provider token over an hour old (the
// adapter renews it and sends once more, and the outcome stays transient when the new one is
// as old), and HTTP/1.1; FCM refuses a grant signed by another key (a definite configuration
// error) and a request without its access token.
func TestMocksRefuseWhatTheGatewaysRefuse(t *testing.T) {
	t.Parallel()
	later := func() time.Time { return time.Now().Add(2 * time.Hour) }
	apns := mockpush.New(mockpush.Options{Protocol: mockpush.APNs, Now: later})
	if _, err := apns.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apns.Close() })
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, apns.CertificatePEM(), 0o600); err != nil {
		t.Fatal(err)
	}
	o := provider(t, "apns", apns, ca).Send(context.Background(), push("a1b2c3d4"))
	if o.Class != engine.OutcomeTransient || o.Code != "apns.expired-provider-token" || len(apns.Sent()) != 0 {
		t.Fatalf("an old provider token: %+v", o)
	}
	resp, err := trusting(apns).Post(apns.URL()+"/3/device/a1b2", "application/json", strings.NewReader(`{"aps":{}}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("HTTP/1.1 answered %d", resp.StatusCode)
	}

	fcm, fcmCA := start(t, mockpush.FCM)
	other, _ := start(t, mockpush.FCM)
	p := provider(t, "fcm", other, fcmCA) // the other mock's key, at the other mock's token_uri
	if o := p.Send(context.Background(), push("a1b2c3d4")); o.Class != engine.OutcomeTransient {
		t.Fatalf("a token endpoint whose certificate is not trusted: %+v", o)
	}
	secret, err := other.SecretFile()
	if err != nil {
		t.Fatal(err)
	}
	// The other mock's key with this mock's token endpoint: the grant is refused for good.
	forged := strings.Replace(string(secret), other.URL(), fcm.URL(), 1)
	u, _ := url.Parse(fcm.URL() + "/v1/")
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "adapters", "fcm", "adapter.js"))
	if err != nil {
		t.Fatal(err)
	}
	bad, err := httpgw.New(httpgw.Config{ID: "fcm", Source: string(src), BaseURL: u, TrustedCAFile: fcmCA,
		RequestHeaders: []string{"content-type"}, Parameters: map[string]string{"project": "switchboard-dev"},
		Auth: httpgw.Auth{Kind: httpgw.AuthGoogleServiceAccount, ServiceAccount: []byte(forged),
			Scopes: []string{"https://www.googleapis.com/auth/firebase.messaging"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bad.Close() })
	if o := bad.Send(context.Background(), push("a1b2c3d4")); o.Class != engine.OutcomePermanent || o.Code != httpgw.CodeGrantRefused ||
		!strings.Contains(o.Reason, "Invalid JWT Signature.") {
		t.Fatalf("a grant signed by another key: %+v", o)
	}
	resp, err = trusting(fcm).Post(fcm.URL()+"/v1/projects/p/messages:send", "application/json", strings.NewReader(`{"message":{"token":"a"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || len(fcm.Sent()) != 0 {
		t.Fatalf("a send without a token answered %d", resp.StatusCode)
	}
}

// trusting is an HTTP/1.1 client that trusts s's certificate.
func trusting(s *mockpush.Server) *http.Client {
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(s.CertificatePEM())
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}
}
