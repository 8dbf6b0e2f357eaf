package runtime

import (
	"strings"
	"testing"
)

func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOST": "sms.example", "PORT": "2600", "EMPTY": "", "DOLLAR": "${HOST}"}
	getenv := func(k string) string { return env[k] }
	tests := []struct {
		in, want string
		used     bool
		err      string // substring of the error, "" for none
	}{
		{in: "plain", want: "plain"},
		{in: "${HOST}", want: "sms.example", used: true},
		{in: "https://${HOST}:${PORT}/api/", want: "https://sms.example:2600/api/", used: true},
		{in: "${MISSING:-fallback}", want: "fallback", used: true},
		{in: "${EMPTY:-fallback}", want: "fallback", used: true},
		{in: "${HOST:-fallback}", want: "sms.example", used: true},
		{in: "${MISSING:-}", want: "", used: true},
		{in: "${MISSING:-a:-b}", want: "a:-b", used: true},
		{in: "$${HOST}", want: "${HOST}"},
		{in: "cost: $$5", want: "cost: $5"},
		{in: "$5 and $", want: "$5 and $"},
		{in: "${DOLLAR}", want: "${HOST}", used: true}, // substituted text is not scanned again
		{in: "${MISSING}", err: "${MISSING} is not set"},
		{in: "${EMPTY}", err: "${EMPTY} is not set"},
		{in: "${HOST", err: "unterminated"},
		{in: "${}", err: "invalid variable name"},
		{in: "${1ABC}", err: "invalid variable name"},
		{in: "${HOST:?required}", err: "must close with }"},
		{in: "${HOST-default}", err: "must close with }"},
	}
	for _, tc := range tests {
		got, used, err := expand(tc.in, getenv)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("expand(%q) error = %v, want it to contain %q", tc.in, err, tc.err)
			}
		case err != nil:
			t.Errorf("expand(%q) error = %v", tc.in, err)
		case got != tc.want || used != tc.used:
			t.Errorf("expand(%q) = %q, %v; want %q, %v", tc.in, got, used, tc.want, tc.used)
		}
	}
}

func TestLoadSubstitutesValuesNotKeys(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env["SMS_HOST"] = "sms.example"
	b.env["RELAY"] = "true"
	b.env["CLIENT"] = "case-system"
	b.env["WORKERS"] = "12"
	rt := b.mustLoad(t, doc(map[string]string{
		"authentication": `authentication: {oidc: {issuer: "https://id.example/$${tenant}", audience: sb, jwksUri: "https://id.example/jwks", allowedClients: ["${CLIENT}", other]}}`,
		"providers": `providers:
  sms:
    kind: http
    baseUrl: "https://${SMS_HOST}/${SMS_PATH:-v2}"
    timeoutMilliseconds: ${SMS_TIMEOUT:-2500}
    authentication: {kind: static-authorization, tokenRef: "secret:file/${SMS_TOKEN_NAME:-sms-token}"}
  mail:
    kind: smtp
    host: "${SMTP_HOST:-127.0.0.1}"
    port: ${SMTP_PORT:-2525}
    tls: ${SMTP_TLS:-none}
  peers:
    kind: peer
    identityKeyRef: "secret:file/peer.key"
    relayService: {enabled: "${RELAY}"}`,
		"dispatch": `dispatch: {concurrency: "${WORKERS}"}`,
	}))
	if got := rt.Authentication.OIDC.Issuer; got != "https://id.example/${tenant}" {
		t.Errorf("issuer = %q ($$ must give a literal $)", got)
	}
	if got := rt.Authentication.OIDC.AllowedClients; len(got) != 2 || got[0] != "case-system" {
		t.Errorf("allowedClients = %v", got)
	}
	h := rt.Providers["sms"].HTTP
	if h.BaseURL.String() != "https://sms.example/v2/" || h.Timeout.Milliseconds() != 2500 ||
		string(h.Authentication.Token.Value()) != smsTokenValue {
		t.Errorf("sms = %v %v", h.BaseURL, h.Timeout)
	}
	if m := rt.Providers["mail"].SMTP; m.Host != "127.0.0.1" || m.Port != 2525 || m.TLS != TLSNone {
		t.Errorf("mail = %+v", m)
	}
	if !rt.Providers["peers"].Peer.RelayService.Enabled || rt.Dispatch.Concurrency != 12 {
		t.Errorf("relayService, concurrency = %v, %d", rt.Providers["peers"].Peer.RelayService, rt.Dispatch.Concurrency)
	}

	// Keys are never substituted: a key written as ${…} stays unknown.
	b.env["SECTION"] = "sandbox"
	_, err := b.load(t, doc(nil)+"${SECTION}: {}\n")
	requireDiag(t, err, CodeInvalid, "${SECTION}")

	// An unset variable in a list item names the item.
	delete(b.env, "CLIENT")
	_, err = b.load(t, doc(map[string]string{"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: sb, jwksUri: "https://id.example/jwks", allowedClients: ["${CLIENT}"]}}`}))
	requireDiag(t, err, CodeInvalid, "authentication.oidc.allowedClients[0]")

	// A substituted value that is not a number is refused where a number is needed.
	b.env["WORKERS"] = "twelve"
	_, err = b.load(t, doc(map[string]string{"dispatch": `dispatch: {concurrency: "${WORKERS}"}`}))
	requireDiag(t, err, CodeInvalid, "dispatch.concurrency")
}
