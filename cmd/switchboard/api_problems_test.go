package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine/auth"
	"switchboard/engine/auth/authtest"
)

const testPhone = "+15550100123"

func smsBody(data map[string]any) map[string]any {
	if data == nil {
		data = map[string]any{"clinicName": "Riverside Clinic", "date": "2026-10-01", "time": "09:30"}
	}
	return map[string]any{
		"senderProfile": "reminders-sms", "to": map[string]string{"phone": testPhone},
		"template": map[string]string{"id": "appointment-reminder-sms", "version": "1"},
		"locale":   "en", "data": data,
	}
}

func with(base map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range base {
		out[kk] = vv
	}
	if v == nil {
		delete(out, k)
	} else {
		out[k] = v
	}
	return out
}

// assertProblem checks a problem answer: status, code, the exact members, the headers, and that
// no submitted value is echoed.
func assertProblem(t *testing.T, o *openAPI, a answer, status int, code string) {
	t.Helper()
	if a.status != status {
		t.Fatalf("status %d, want %d: %s", a.status, status, a.raw)
	}
	if ct := a.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type %q", ct)
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("Cache-Control %q", a.header.Get("Cache-Control"))
	}
	o.check(t, "Problem", a.raw)
	if got := a.json(t)["code"]; got != code {
		t.Fatalf("code %v, want %s: %s", got, code, a.raw)
	}
	for _, secret := range []string{testPhone, "Riverside", "someone@example.org"} {
		if strings.Contains(string(a.raw), secret) {
			t.Fatalf("problem echoes a submitted value %q: %s", secret, a.raw)
		}
	}
}

func TestProblemCodes(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	sender := e.token("case-system")
	operator := e.token("operations-console")
	receiver := e.token("inbox-reader")
	noScope, _ := e.issuer.Mint("case-system", nil, time.Hour, e.clock.Now())
	expired, _ := e.issuer.Mint("case-system", []string{"messaging:send"}, time.Hour, e.clock.Now().Add(-3*time.Hour))
	unknownClient, _ := e.issuer.Mint("stranger", []string{"messaging:send"}, time.Hour, e.clock.Now())
	otherAud, _ := auth.LoadDevIssuer(devLayout(e.dir).issuerKeyPath, devIssuer, "another-audience")
	wrongAud, _ := otherAud.Mint("case-system", []string{"messaging:send"}, time.Hour, e.clock.Now())
	otherIss, _ := auth.LoadDevIssuer(devLayout(e.dir).issuerKeyPath, "https://elsewhere.invalid", devAudience)
	wrongIss, _ := otherIss.Mint("case-system", []string{"messaging:send"}, time.Hour, e.clock.Now())
	now := e.clock.Now()
	none := authtest.SignNone(authtest.Claims(devIssuer, devAudience, "case-system", []string{"messaging:send"}, now, time.Hour))
	hmacTok := authtest.SignHMAC([]byte("secret"), "k", authtest.Claims(devIssuer, devAudience, "case-system", []string{"messaging:send"}, now, time.Hour))
	foreign := authtest.MustKey(t, authtest.ES256, "foreign").MustMint(t,
		authtest.Claims(devIssuer, devAudience, "case-system", []string{"messaging:send"}, now, time.Hour), nil)

	big := strings.Repeat("x", 1<<20+10)
	cases := []struct {
		name   string
		req    request
		status int
		code   string
	}{
		{"no token", request{method: "POST", path: "/v1/messages", key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"garbage token", request{method: "POST", path: "/v1/messages", token: "abc.def", key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"alg none", request{method: "POST", path: "/v1/messages", token: none, key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"hmac token", request{method: "POST", path: "/v1/messages", token: hmacTok, key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"key of another issuer", request{method: "POST", path: "/v1/messages", token: foreign, key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"expired token", request{method: "POST", path: "/v1/messages", token: expired, key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"wrong audience", request{method: "POST", path: "/v1/messages", token: wrongAud, key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"wrong issuer", request{method: "POST", path: "/v1/messages", token: wrongIss, key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"unknown client", request{method: "POST", path: "/v1/messages", token: unknownClient, key: "k", body: smsBody(nil)}, 401, "authentication.refused"},
		{"missing scope", request{method: "POST", path: "/v1/messages", token: noScope, key: "k", body: smsBody(nil)}, 403, "operation.not-authorized"},
		{"operator may not submit", request{method: "POST", path: "/v1/messages", token: operator, key: "k", body: smsBody(nil)}, 403, "operation.not-authorized"},
		{"receiver may not read the queue figures", request{method: "GET", path: "/v1/slo", token: receiver}, 403, "operation.not-authorized"},
		{"no idempotency key", request{method: "POST", path: "/v1/messages", token: sender, body: smsBody(nil)}, 400, "request.invalid"},
		{"idempotency key too long", request{method: "POST", path: "/v1/messages", token: sender, key: strings.Repeat("k", 129), body: smsBody(nil)}, 400, "request.invalid"},
		{"malformed json", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: []byte(`{"senderProfile":`)}, 400, "request.invalid"},
		{"unknown member", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: with(smsBody(nil), "priority", "high")}, 400, "request.invalid"},
		{"two json values", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: []byte(`{} {}`)}, 400, "request.invalid"},
		{"not json", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: []byte("a=b"), contentType: "application/x-www-form-urlencoded"}, 415, "request.unsupported-media-type"},
		{"body over 1 MiB", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: []byte(`{"correlationId":"` + big + `"}`)}, 413, "request.body-too-large"},
		// Every route refuses a body over 1 MiB before anything else, the public ones included
		// (the 413 the OpenAPI document lists for each of them).
		{"body over 1 MiB on GET /health", request{method: "GET", path: "/health", body: []byte(big)}, 413, "request.body-too-large"},
		{"body over 1 MiB on GET /ready", request{method: "GET", path: "/ready", body: []byte(big)}, 413, "request.body-too-large"},
		{"body over 1 MiB on GET /openapi.json", request{method: "GET", path: "/openapi.json", body: []byte(big)}, 413, "request.body-too-large"},
		{"unknown sender profile", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: with(smsBody(nil), "senderProfile", "nope")}, 403, "profile.not-authorized"},
		{"direct content not allowed", request{method: "POST", path: "/v1/messages", token: sender, key: "k",
			body: map[string]any{"senderProfile": "reminders-sms", "to": map[string]string{"phone": testPhone}, "content": map[string]string{"text": "hi"}}}, 403, "profile.not-authorized"},
		{"no such template version", request{method: "POST", path: "/v1/messages", token: sender, key: "k",
			body: with(smsBody(nil), "template", map[string]string{"id": "appointment-reminder-sms", "version": "9"})}, 404, "template.not-found"},
		{"sender profile missing", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: with(smsBody(nil), "senderProfile", nil)}, 422, "request.unprocessable"},
		{"phone not E.164", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: with(smsBody(nil), "to", map[string]string{"phone": "5550100"})}, 422, "request.unprocessable"},
		{"expiresAt in the past", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: with(smsBody(nil), "expiresAt", now.Add(-time.Hour).Format(time.RFC3339))}, 422, "request.unprocessable"},
		{"expiresAt beyond payload retention", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: with(smsBody(nil), "expiresAt", now.Add(30*24*time.Hour).Format(time.RFC3339))}, 422, "request.unprocessable"},
		{"email address for an sms", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: with(smsBody(nil), "to", map[string]string{"email": "someone@example.org"})}, 422, "content.invalid"},
		{"template of another channel", request{method: "POST", path: "/v1/messages", token: sender, key: "k",
			body: with(smsBody(nil), "template", map[string]string{"id": "appointment-reminder", "version": "1"})}, 422, "content.invalid"},
		{"data does not validate", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: smsBody(map[string]any{"date": "2026-10-01", "time": "09:30"})}, 422, "template.data-invalid"},
		{"locale not declared", request{method: "POST", path: "/v1/messages", token: sender, key: "k", body: with(smsBody(nil), "locale", "de")}, 422, "template.locale-unavailable"},
		{"unknown message", request{method: "GET", path: "/v1/messages/0193aaaa-0000-7000-8000-000000000000", token: sender}, 404, "message.not-visible"},
		{"no such route", request{method: "GET", path: "/v2/things", token: sender}, 404, "request.not-found"},
		{"wrong method", request{method: "GET", path: "/v1/messages/0190f5a0-0000-7000-8000-000000000001/cancel", token: sender}, 405, "request.method-not-allowed"},
		{"preview of a template not allowed: unknown id", request{method: "POST", path: "/v1/templates/nope/versions/1/preview", token: sender, body: map[string]any{"locale": "en"}}, 403, "profile.not-authorized"},
		{"callback for an unknown provider", request{method: "POST", path: "/v1/provider-callbacks/nope", body: map[string]string{"id": "x", "status": "delivered"}}, 403, "callback.unverified"},
		{"callback without a signature", request{method: "POST", path: "/v1/provider-callbacks/sms-gateway", body: map[string]string{"id": "x", "status": "delivered"}}, 403, "callback.unverified"},
		{"callback with a bad signature", request{method: "POST", path: "/v1/provider-callbacks/sms-gateway", body: map[string]string{"id": "x", "status": "delivered"},
			header: map[string]string{"x-signature": strings.Repeat("ab", 32)}}, 403, "callback.unverified"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := e.do(tc.req)
			assertProblem(t, o, a, tc.status, tc.code)
			if tc.status == 401 && a.header.Get("WWW-Authenticate") == "" {
				t.Fatal("401 without WWW-Authenticate")
			}
			if tc.status == 405 && a.header.Get("Allow") != "POST" {
				t.Fatalf("Allow %q", a.header.Get("Allow"))
			}
		})
	}
}

// sign signs a callback body as the quickstart's hmac-sha256-body verifier expects.
func (e *apiEnv) sign(body []byte) string {
	secret, err := os.ReadFile(filepath.Join(devLayout(e.dir).secrets, "callback-secret"))
	if err != nil {
		e.t.Fatal(err)
	}
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

func TestCallbacks(t *testing.T) {
	t.Parallel()
	e := newAPIEnv(t, envOptions{})
	o := loadOpenAPI(t, e.do(request{method: "GET", path: "/openapi.json"}).raw)
	unmatched := []byte(`{"id":"gw-404","status":"delivered"}`)
	a := e.do(request{method: "POST", path: "/v1/provider-callbacks/sms-gateway", body: unmatched, header: map[string]string{"x-signature": e.sign(unmatched)}})
	if a.status != 204 {
		t.Fatalf("unmatched verified receipt: %d %s", a.status, a.raw)
	}
	other := []byte(`{"id":"gw-404","status":"undelivered"}`)
	a = e.do(request{method: "POST", path: "/v1/provider-callbacks/sms-gateway", body: other, header: map[string]string{"x-signature": e.sign(unmatched)}})
	assertProblem(t, o, a, 403, "callback.unverified")
	unreadable := []byte(`{"weird":1}`)
	a = e.do(request{method: "POST", path: "/v1/provider-callbacks/sms-gateway", body: unreadable, header: map[string]string{"x-signature": e.sign(unreadable)}})
	assertProblem(t, o, a, 422, "callback.unreadable")
	ignored := []byte(`{"id":"gw-1","status":"queued"}`)
	a = e.do(request{method: "POST", path: "/v1/provider-callbacks/sms-gateway", body: ignored, header: map[string]string{"x-signature": e.sign(ignored)}})
	if a.status != 204 {
		t.Fatalf("ignored receipt: %d %s", a.status, a.raw)
	}
}
