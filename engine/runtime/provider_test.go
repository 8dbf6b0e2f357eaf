package runtime

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"reflect"
	"testing"
)

func TestLoadHTTPAuthenticationKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, baseURL, auth string
		check               func(t *testing.T, h *HTTPProvider)
	}{
		{name: "none towards IPv4 loopback", baseURL: "http://127.0.0.1:8080/mock", auth: `{kind: none}`,
			check: func(t *testing.T, h *HTTPProvider) {
				if h.BaseURL.String() != "http://127.0.0.1:8080/mock/" || h.Authentication.Kind != AuthNone {
					t.Errorf("got %v %+v", h.BaseURL, h.Authentication)
				}
			}},
		{name: "none towards IPv6 loopback", baseURL: "http://[::1]:8080/", auth: `{kind: none}`,
			check: func(t *testing.T, h *HTTPProvider) {
				if h.BaseURL.Hostname() != "::1" {
					t.Errorf("got %v", h.BaseURL)
				}
			}},
		{name: "basic", baseURL: "https://gw.example/", auth: `{kind: basic, usernameRef: "secret:file/smtp-user", passwordRef: "secret:file/smtp-password"}`,
			check: func(t *testing.T, h *HTTPProvider) {
				a := h.Authentication
				if string(a.Username.Value()) != smtpUserValue || string(a.Password.Value()) != smtpPassValue {
					t.Errorf("got %+v", a)
				}
			}},
		{name: "static api key", baseURL: "https://gw.example/", auth: `{kind: static-api-key, header: X-API-Key, tokenRef: "secret:file/sms-token"}`,
			check: func(t *testing.T, h *HTTPProvider) {
				if a := h.Authentication; a.Header != "x-api-key" || string(a.Token.Value()) != smsTokenValue {
					t.Errorf("got %+v", a)
				}
			}},
		{name: "static authorization with its own scheme", baseURL: "https://gw.example/", auth: `{kind: static-authorization, scheme: Token, tokenRef: "secret:file/sms-token"}`,
			check: func(t *testing.T, h *HTTPProvider) {
				if a := h.Authentication; a.Scheme != "Token" {
					t.Errorf("got %+v", a)
				}
			}},
		{name: "oauth2 client credentials", baseURL: "https://gw.example/",
			auth: `{kind: oauth2-client-credentials, tokenUrl: "https://id.example/token", clientId: switchboard, clientSecretRef: "secret:file/sms-token", scopes: [sms.send, sms.read]}`,
			check: func(t *testing.T, h *HTTPProvider) {
				a := h.Authentication
				if a.TokenURL.String() != "https://id.example/token" || a.ClientID != "switchboard" ||
					string(a.ClientSecret.Value()) != smsTokenValue || !reflect.DeepEqual(a.Scopes, []string{"sms.send", "sms.read"}) {
					t.Errorf("got %+v", a)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(`    baseUrl: "`+tc.baseURL+`"`, "    authentication: "+tc.auth)}))
			tc.check(t, rt.Providers["sms"].HTTP)
		})
	}
}

func TestLoadCallbackVerifiers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		verifier string
		want     Verifier
		key      string
	}{
		{verifier: `{kind: hmac-sha256-body, header: X-Signature, encoding: base64, secretRef: "secret:file/sms-callback"}`,
			want: Verifier{Kind: VerifierHMACSHA256Body, Header: "x-signature", Encoding: "base64"}, key: smsCallbackValue},
		{verifier: `{kind: hmac-sha256-body, header: x-sig, secretRef: "secret:file/sms-callback"}`,
			want: Verifier{Kind: VerifierHMACSHA256Body, Header: "x-sig", Encoding: "hex"}, key: smsCallbackValue},
		{verifier: `{kind: twilio, url: "https://hooks.example/v1/provider-callbacks/sms?tenant=a", secretRef: "secret:file/sms-callback"}`,
			want: Verifier{Kind: VerifierTwilio, URL: "https://hooks.example/v1/provider-callbacks/sms?tenant=a"}, key: smsCallbackValue},
		{verifier: `{kind: path-token, tokenRef: "secret:file/path-token"}`,
			want: Verifier{Kind: VerifierPathToken}},
	}
	for _, tc := range tests {
		t.Run(tc.want.Kind, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP("    callbackVerifier: " + tc.verifier)}))
			v := *rt.Providers["sms"].HTTP.CallbackVerifier
			if string(v.Key()) != tc.key {
				t.Errorf("Key = %q, want %q", v.Key(), tc.key)
			}
			if tc.want.Kind == VerifierPathToken && string(v.Token.Value()) != pathTokenValue {
				t.Errorf("Token not resolved")
			}
			v.Secret, v.Token = Secret{}, Secret{}
			if !reflect.DeepEqual(v, tc.want) {
				t.Errorf("Verifier = %+v, want %+v", v, tc.want)
			}
		})
	}
}

func TestLoadDKIMKeys(t *testing.T) {
	t.Parallel()
	key, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	pkcs1 := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8 := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	for name, ok := range map[string]bool{"rsa1.pem": true, "rsa8.pem": true, "cert.pem": false} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.secret(t, "rsa1.pem", string(pkcs1), 0o600)
			b.secret(t, "rsa8.pem", string(pkcs8), 0o400)
			b.secret(t, "cert.pem", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", 0o600)
			_, err := b.load(t, doc(map[string]string{"providers": withSMTP("    host: smtp.example",
				`    dkim: {domain: example.org, selector: s1._v2, privateKeyRef: "secret:file/`+name+`"}`)}))
			if ok && err != nil {
				t.Errorf("Load: %v", err)
			}
			if !ok {
				requireDiag(t, err, CodeInvalid, "providers.mail.dkim.privateKeyRef")
			}
		})
	}
}
