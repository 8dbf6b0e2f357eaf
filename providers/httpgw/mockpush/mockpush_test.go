package mockpush_test

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"

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
