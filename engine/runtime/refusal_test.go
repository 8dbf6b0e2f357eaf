package runtime

import (
	"path/filepath"
	"strings"
	"testing"
)

const httpProvider = `providers:
  sms:
    kind: http
    baseUrl: "https://sms.example/api/"
    authentication: {kind: static-authorization, tokenRef: "secret:file/sms-token"}
`

// withHTTP returns an http provider "sms" whose lines are replaced (by key prefix) or added.
func withHTTP(lines ...string) string {
	base := []string{
		`    baseUrl: "https://sms.example/api/"`,
		`    authentication: {kind: static-authorization, tokenRef: "secret:file/sms-token"}`,
	}
	for _, l := range lines {
		key := strings.SplitN(strings.TrimSpace(l), ":", 2)[0]
		replaced := false
		for i, b := range base {
			if strings.HasPrefix(strings.TrimSpace(b), key+":") {
				base[i], replaced = l, true
			}
		}
		if !replaced {
			base = append(base, l)
		}
	}
	return "providers:\n  sms:\n    kind: http\n" + strings.Join(base, "\n")
}

// withSMTP returns an smtp provider "mail" with the given member lines.
func withSMTP(lines ...string) string {
	return "providers:\n  mail:\n    kind: smtp\n" + strings.Join(lines, "\n")
}

// withPeer is a providers section with one peer provider "peers" and lines added to it; its
// first added line is line 11 of the document.
func withPeer(lines ...string) string {
	return "providers:\n  peers:\n    kind: peer\n    identityKeyRef: \"secret:file/peer.key\"\n" + strings.Join(lines, "\n")
}

func TestLoadRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		overrides map[string]string
		env       map[string]string
		code      string
		member    string
		line      int    // checked when not 0
		contains  string // checked when not ""
	}{
		{name: "unknown top-level key names its line", overrides: map[string]string{"sandbox": "sandbox: {}\ntimeouts: 5"},
			code: CodeInvalid, member: "timeouts", line: 9, contains: "unknown key"},
		{name: "unknown nested key names its line", overrides: map[string]string{"providers": httpProvider + "    retries: 3\n"},
			code: CodeInvalid, member: "providers.sms.retries", line: 12},
		{name: "unknown key inside a flow mapping", overrides: map[string]string{"database": "database: {driver: sqlite, path: ./db, journal: wal}"},
			code: CodeInvalid, member: "database.journal", line: 4},
		{name: "key of another authentication kind", overrides: map[string]string{"providers": withHTTP(`    authentication: {kind: static-authorization, tokenRef: "secret:file/sms-token", header: x-key}`)},
			code: CodeInvalid, member: "providers.sms.authentication.header"},
		{name: "duplicate key", overrides: map[string]string{"listen": "listen: {api: \"127.0.0.1:1\", api: \"127.0.0.1:2\"}"},
			code: CodeInvalid, member: "listen.api", contains: "duplicate"},
		{name: "merge key", overrides: map[string]string{"listen": "listen: {<<: {api: \"127.0.0.1:1\"}}"},
			code: CodeInvalid, member: "listen.<<"},
		{name: "wrong apiVersion", overrides: map[string]string{"apiVersion": "apiVersion: switchboard/v2"},
			code: CodeInvalid, member: "apiVersion", line: 1},
		{name: "wrong kind", overrides: map[string]string{"kind": "kind: Package"}, code: CodeInvalid, member: "kind"},
		{name: "missing apiVersion", overrides: map[string]string{"apiVersion": ""}, code: CodeInvalid, member: "apiVersion"},
		{name: "bad driver", overrides: map[string]string{"database": "database: {driver: mysql, path: ./db}"},
			code: CodeInvalid, member: "database.driver", line: 4},
		{name: "missing database", overrides: map[string]string{"database": ""}, code: CodeInvalid, member: "database"},
		{name: "sqlite without path", overrides: map[string]string{"database": "database: {driver: sqlite}"},
			code: CodeInvalid, member: "database.path"},
		{name: "sqlite with urlRef", overrides: map[string]string{"database": `database: {driver: sqlite, path: ./db, urlRef: "secret:env/DB"}`},
			code: CodeInvalid, member: "database.urlRef"},
		{name: "postgres with path", overrides: map[string]string{"database": `database: {driver: postgres, urlRef: "secret:env/DB", path: ./db}`},
			env: map[string]string{"DB": databaseURLValue}, code: CodeInvalid, member: "database.path"},
		{name: "bad synchronous", overrides: map[string]string{"database": "database: {driver: sqlite, path: ./db, synchronous: off}"},
			code: CodeInvalid, member: "database.synchronous"},
		{name: "missing package root", overrides: map[string]string{"package": "package: {root: ./nowhere}"},
			code: CodeUnreadable, member: "package.root", line: 3},
		{name: "package root is a file", overrides: map[string]string{"package": "package: {root: ./runtime.yaml}"},
			code: CodeInvalid, member: "package.root"},
		{name: "missing package", overrides: map[string]string{"package": ""}, code: CodeInvalid, member: "package"},
		{name: "bad digest pin", overrides: map[string]string{"package": "package: {root: ./package, expectedDigest: \"sha256:ABC\"}"},
			code: CodeInvalid, member: "package.expectedDigest"},
		{name: "unset variable without default", overrides: map[string]string{"database": "database: {driver: sqlite, path: \"${DB_PATH}\"}"},
			code: CodeInvalid, member: "database.path", contains: "${DB_PATH} is not set"},
		{name: "unterminated variable", overrides: map[string]string{"database": "database: {driver: sqlite, path: \"${DB_PATH\"}"},
			code: CodeInvalid, member: "database.path", contains: "unterminated"},
		{name: "unsupported variable operator", overrides: map[string]string{"database": "database: {driver: sqlite, path: \"${DB_PATH:?needed}\"}"},
			code: CodeInvalid, member: "database.path"},
		{name: "integer given as a quoted string", overrides: map[string]string{"dispatch": "dispatch: {concurrency: \"8\"}"},
			code: CodeInvalid, member: "dispatch.concurrency"},
		{name: "secret:env without secrets.env", overrides: map[string]string{"secrets": "secrets: {file: {root: ./secrets}}",
			"audit": `audit: {keyRef: "secret:env/AUDIT_KEY"}`}, env: map[string]string{"AUDIT_KEY": auditKeyValue},
			code: CodeInvalid, member: "audit.keyRef", contains: "secrets.env"},
		{name: "secret:file without secrets.file", overrides: map[string]string{"secrets": "secrets: {env: {}}"},
			code: CodeInvalid, member: "audit.keyRef", contains: "secrets.file.root"},
		{name: "secret:env empty", overrides: map[string]string{"audit": `audit: {keyRef: "secret:env/AUDIT_KEY"}`},
			code: CodeSecretUnreadable, member: "audit.keyRef"},
		{name: "not a secret reference", overrides: map[string]string{"audit": `audit: {keyRef: "` + auditKeyValue + `"}`},
			code: CodeInvalid, member: "audit.keyRef"},
		{name: "secret name with a slash", overrides: map[string]string{"audit": `audit: {keyRef: "secret:file/../audit.key"}`},
			code: CodeInvalid, member: "audit.keyRef"},
		{name: "missing secrets root", overrides: map[string]string{"secrets": "secrets: {file: {root: ./vault}}"},
			code: CodeUnreadable, member: "secrets.file.root"},
		{name: "audit key too short", overrides: map[string]string{"audit": `audit: {keyRef: "secret:file/sms-token"}`},
			code: CodeInvalid, member: "audit.keyRef", contains: "32 bytes"},
		{name: "missing audit", overrides: map[string]string{"audit": ""}, code: CodeInvalid, member: "audit"},
		{name: "plain http baseUrl to a remote host", overrides: map[string]string{"providers": withHTTP(`    baseUrl: "http://sms.example/api/"`)},
			code: CodeInvalid, member: "providers.sms.baseUrl", line: 10},
		{name: "baseUrl with credentials", overrides: map[string]string{"providers": withHTTP(`    baseUrl: "https://u:p@sms.example/api/"`)},
			code: CodeInvalid, member: "providers.sms.baseUrl"},
		{name: "baseUrl with query", overrides: map[string]string{"providers": withHTTP(`    baseUrl: "https://sms.example/api/?k=v"`)},
			code: CodeInvalid, member: "providers.sms.baseUrl"},
		{name: "auth none to a remote host", overrides: map[string]string{"providers": withHTTP(`    authentication: {kind: none}`)},
			code: CodeInvalid, member: "providers.sms.authentication.kind"},
		{name: "missing http authentication", overrides: map[string]string{"providers": "providers:\n  sms:\n    kind: http\n    baseUrl: \"https://sms.example/\""},
			code: CodeInvalid, member: "providers.sms.authentication"},
		{name: "unknown authentication kind", overrides: map[string]string{"providers": withHTTP(`    authentication: {kind: digest}`)},
			code: CodeInvalid, member: "providers.sms.authentication.kind"},
		{name: "api key in a reserved header", overrides: map[string]string{"providers": withHTTP(`    authentication: {kind: static-api-key, header: Host, tokenRef: "secret:file/sms-token"}`)},
			code: CodeInvalid, member: "providers.sms.authentication.header"},
		{name: "oauth2 token url over plain http", overrides: map[string]string{"providers": withHTTP(`    authentication: {kind: oauth2-client-credentials, tokenUrl: "http://id.example/token", clientId: sb, clientSecretRef: "secret:file/sms-token"}`)},
			code: CodeInvalid, member: "providers.sms.authentication.tokenUrl"},
		{name: "basic without password", overrides: map[string]string{"providers": withHTTP(`    authentication: {kind: basic, usernameRef: "secret:file/smtp-user"}`)},
			code: CodeInvalid, member: "providers.sms.authentication.passwordRef"},
		{name: "http timeout zero", overrides: map[string]string{"providers": withHTTP("    timeoutMilliseconds: 0")},
			code: CodeInvalid, member: "providers.sms.timeoutMilliseconds"},
		{name: "unknown verifier kind", overrides: map[string]string{"providers": withHTTP(`    callbackVerifier: {kind: open}`)},
			code: CodeInvalid, member: "providers.sms.callbackVerifier.kind"},
		{name: "hmac verifier bad encoding", overrides: map[string]string{"providers": withHTTP(`    callbackVerifier: {kind: hmac-sha256-body, header: x-sig, encoding: base32, secretRef: "secret:file/sms-callback"}`)},
			code: CodeInvalid, member: "providers.sms.callbackVerifier.encoding"},
		{name: "twilio verifier without url", overrides: map[string]string{"providers": withHTTP(`    callbackVerifier: {kind: twilio, secretRef: "secret:file/sms-callback"}`)},
			code: CodeInvalid, member: "providers.sms.callbackVerifier.url"},
		{name: "standard-webhooks secret without whsec_", overrides: map[string]string{"providers": withHTTP(`    callbackVerifier: {kind: standard-webhooks, secretRef: "secret:file/sms-callback"}`)},
			code: CodeInvalid, member: "providers.sms.callbackVerifier.secretRef", contains: "whsec_"},
		{name: "path token too short", overrides: map[string]string{"providers": withHTTP(`    callbackVerifier: {kind: path-token, tokenRef: "secret:file/smtp-user"}`)},
			code: CodeInvalid, member: "providers.sms.callbackVerifier.tokenRef"},
		{name: "invalid provider id", overrides: map[string]string{"providers": "providers:\n  SMS_Gateway: {kind: peer, identityKeyRef: \"secret:file/peer.key\"}"},
			code: CodeInvalid, member: "providers.SMS_Gateway"},
		{name: "unknown provider kind", overrides: map[string]string{"providers": "providers:\n  fax: {kind: fax}"},
			code: CodeInvalid, member: "providers.fax.kind"},
		{name: "provider without kind", overrides: map[string]string{"providers": "providers:\n  fax: {host: fax.example}"},
			code: CodeInvalid, member: "providers.fax.kind"},
		{name: "smtp tls none to a remote host", overrides: map[string]string{"providers": withSMTP("    host: smtp.example", "    port: 25", "    tls: none")},
			code: CodeInvalid, member: "providers.mail.tls"},
		{name: "smtp tls none without port", overrides: map[string]string{"providers": withSMTP("    host: 127.0.0.1", "    tls: none")},
			code: CodeInvalid, member: "providers.mail.port"},
		{name: "smtp host with port", overrides: map[string]string{"providers": withSMTP("    host: smtp.example:587")},
			code: CodeInvalid, member: "providers.mail.host"},
		{name: "smtp missing trusted CA file", overrides: map[string]string{"providers": withSMTP("    host: smtp.example", "    trustedCaFile: ./ca.pem")},
			code: CodeUnreadable, member: "providers.mail.trustedCaFile"},
		{name: "dkim key that is not a key", overrides: map[string]string{"providers": withSMTP("    host: smtp.example", `    dkim: {domain: example.org, selector: s1, privateKeyRef: "secret:file/sms-token"}`)},
			code: CodeInvalid, member: "providers.mail.dkim.privateKeyRef"},
		{name: "relay without peer id", overrides: map[string]string{"providers": "providers:\n  peers: {kind: peer, identityKeyRef: \"secret:file/peer.key\", relays: [\"/ip4/203.0.113.7/tcp/4001\"]}"},
			code: CodeInvalid, member: "providers.peers.relays[0]"},
		{name: "address book with a bad peer id", overrides: map[string]string{"providers": "providers:\n  peers: {kind: peer, identityKeyRef: \"secret:file/peer.key\", addressBook: {\"not a peer\": [\"/ip4/198.51.100.4/tcp/4001\"]}}"},
			code: CodeInvalid, member: "providers.peers.addressBook.not a peer"},
		{name: "allowedPeers a word other than any", overrides: map[string]string{"providers": withPeer("    allowedPeers: everyone")},
			code: CodeInvalid, member: "providers.peers.allowedPeers", line: 11},
		{name: "allowedPeers a mapping", overrides: map[string]string{"providers": withPeer("    allowedPeers: {any: true}")},
			code: CodeInvalid, member: "providers.peers.allowedPeers", line: 11},
		{name: "allowedPeers with a bad peer id", overrides: map[string]string{"providers": withPeer("    allowedPeers:",
			"      - 12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo", "      - not-a-peer")},
			code: CodeInvalid, member: "providers.peers.allowedPeers[1]", line: 13},
		{name: "inboxQuota messagesPerMinute zero", overrides: map[string]string{"providers": withPeer("    inboxQuota: {messagesPerMinute: 0}")},
			code: CodeInvalid, member: "providers.peers.inboxQuota.messagesPerMinute", line: 11, contains: "integer from 1"},
		{name: "inboxQuota bytesPerDay negative", overrides: map[string]string{"providers": withPeer("    inboxQuota:", "      bytesPerDay: -5")},
			code: CodeInvalid, member: "providers.peers.inboxQuota.bytesPerDay", line: 12},
		{name: "inboxQuota bytesPerDay with a unit", overrides: map[string]string{"providers": withPeer("    inboxQuota: {bytesPerDay: 100MiB}")},
			code: CodeInvalid, member: "providers.peers.inboxQuota.bytesPerDay"},
		{name: "inboxQuota messagesPerMinute fractional", overrides: map[string]string{"providers": withPeer("    inboxQuota: {messagesPerMinute: 2.5}")},
			code: CodeInvalid, member: "providers.peers.inboxQuota.messagesPerMinute"},
		{name: "inboxQuota unknown member", overrides: map[string]string{"providers": withPeer("    inboxQuota: {burst: 5}")},
			code: CodeInvalid, member: "providers.peers.inboxQuota.burst", line: 11},
		{name: "peer without identity key", overrides: map[string]string{"providers": "providers:\n  peers: {kind: peer}"},
			code: CodeInvalid, member: "providers.peers.identityKeyRef"},
		{name: "jwksUri over plain http to a remote host", overrides: map[string]string{"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: sb, jwksUri: "http://id.example/jwks", allowedClients: [c]}}`},
			code: CodeInvalid, member: "authentication.oidc.jwksUri", line: 6},
		{name: "jwksUri and jwksFile together", overrides: map[string]string{"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: sb, jwksUri: "https://id.example/jwks", jwksFile: ./jwks.json, allowedClients: [c]}}`},
			code: CodeInvalid, member: "authentication.oidc.jwksFile"},
		{name: "neither jwksUri nor jwksFile", overrides: map[string]string{"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: sb, allowedClients: [c]}}`},
			code: CodeInvalid, member: "authentication.oidc.jwksUri"},
		{name: "missing jwksFile", overrides: map[string]string{"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: sb, jwksFile: ./jwks.json, allowedClients: [c]}}`},
			code: CodeUnreadable, member: "authentication.oidc.jwksFile"},
		{name: "empty allowedClients", overrides: map[string]string{"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: sb, jwksUri: "https://id.example/jwks", allowedClients: []}}`},
			code: CodeInvalid, member: "authentication.oidc.allowedClients"},
		{name: "tokenTypes empty", overrides: map[string]string{"authentication": withTokenTypes("[]")},
			code: CodeInvalid, member: "authentication.oidc.tokenTypes", contains: "at least one"},
		{name: "tokenTypes unknown", overrides: map[string]string{"authentication": withTokenTypes("[at+jwt, id_token]")},
			code: CodeInvalid, member: "authentication.oidc.tokenTypes", contains: "not at+jwt, JWT"},
		{name: "tokenTypes one type twice", overrides: map[string]string{"authentication": withTokenTypes("[JWT, application/jwt]")},
			code: CodeInvalid, member: "authentication.oidc.tokenTypes", contains: "twice"},
		{name: "tokenTypes a scalar", overrides: map[string]string{"authentication": withTokenTypes("JWT")},
			code: CodeInvalid, member: "authentication.oidc.tokenTypes"},
		{name: "tokenTypes JWT with the audience an allowed client", overrides: map[string]string{"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: c, jwksUri: "https://id.example/jwks", allowedClients: [c], tokenTypes: [JWT]}}`},
			code: CodeInvalid, member: "authentication.oidc.audience", contains: "ID token"},
		{name: "bad listen address", overrides: map[string]string{"listen": `listen: {api: "127.0.0.1"}`},
			code: CodeInvalid, member: "listen.api"},
		{name: "metrics on the api address", overrides: map[string]string{"listen": `listen: {api: "127.0.0.1:8107", metrics: "127.0.0.1:8107"}`},
			code: CodeInvalid, member: "listen.metrics"},
		{name: "recordDays below payloadDays", overrides: map[string]string{"retention": "retention: {payloadDays: 30, recordDays: 7}"},
			code: CodeInvalid, member: "retention.recordDays"},
		{name: "retention zero", overrides: map[string]string{"retention": "retention: {submissionReceiptDays: 0}"},
			code: CodeInvalid, member: "retention.submissionReceiptDays"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			for k, v := range tc.env {
				b.env[k] = v
			}
			rt, err := b.load(t, doc(tc.overrides))
			if rt != nil {
				t.Errorf("Load returned a runtime with an error")
			}
			d := requireDiag(t, err, tc.code, tc.member)
			if tc.line != 0 && d.Line != tc.line {
				t.Errorf("line = %d, want %d (%v)", d.Line, tc.line, d)
			}
			if tc.contains != "" && !strings.Contains(d.Message, tc.contains) {
				t.Errorf("message %q does not contain %q", d.Message, tc.contains)
			}
			if d.Path != filepath.Join(b.dir, "runtime.yaml") {
				t.Errorf("path = %q", d.Path)
			}
		})
	}
}

// withTokenTypes is an authentication section with oidc.tokenTypes set to the YAML value list.
func withTokenTypes(list string) string {
	return `authentication: {oidc: {issuer: "https://id.example", audience: sb, jwksUri: "https://id.example/jwks", allowedClients: [c], tokenTypes: ` + list + `}}`
}
