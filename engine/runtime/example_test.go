package runtime

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// specExample is the reference example of a runtime file, line for line, with its "…" placeholders
// filled in with concrete values (and secret references for the smtp credentials).
const specExample = `apiVersion: switchboard/v1
kind: Runtime
package: {root: ./package, expectedDigest: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}      # digest pin optional
listen: {api: "127.0.0.1:8107", metrics: "127.0.0.1:9107"}
database: {driver: sqlite, path: ./data/switchboard.db}       # or {driver: postgres, urlRef: "secret:env/DATABASE_URL"}
secrets: {file: {root: ./secrets}, env: {}}                   # enables secret:file/NAME and secret:env/NAME
authentication:
  oidc: {issuer: "https://id.example", audience: switchboard, jwksUri: "https://id.example/.well-known/jwks.json", allowedClients: [case-system]}
  scopeClaim: scope               # space-separated string or array claim; default "scope"
  clientClaim: client_id          # default "client_id" (RFC 9068)
providers:
  sms-gateway:
    kind: http
    baseUrl: "https://sms.example/api/"
    timeoutMilliseconds: 5000
    maximumResponseBytes: 65536
    authentication: {kind: static-authorization, scheme: Bearer, tokenRef: "secret:file/sms-token"}
    callbackVerifier: {kind: hmac-sha256-body, header: x-signature, encoding: hex, secretRef: "secret:file/sms-callback"}
  mail-relay:
    kind: smtp
    host: smtp.example
    port: 587
    tls: starttls                  # starttls | implicit | none (loopback only)
    authentication: {usernameRef: "secret:file/smtp-user", passwordRef: "secret:file/smtp-password"}
    dkim: {domain: example.org, selector: s1, privateKeyRef: "secret:file/dkim.pem"}
  peers:
    kind: peer
    identityKeyRef: "secret:file/peer.key"
    listen: ["/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"]
    protocol: /switchboard/1.0.0/message
    relays: ["/ip4/203.0.113.7/tcp/4001/p2p/12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA"]
    relayService: {enabled: false}
    addressBook: {"12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo": ["/ip4/198.51.100.4/tcp/4001"]}
dispatch: {concurrency: 8, batchSize: 100, maxPayloadBytes: 10485760, pollIntervalMilliseconds: 1000}
audit: {keyRef: "secret:file/audit.key"}
retention: {payloadDays: 7, recordDays: 90, submissionReceiptDays: 7}
`

func TestLoadSpecExample(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, specExample)

	if rt.Path != filepath.Join(b.dir, "runtime.yaml") || rt.Dir != b.dir {
		t.Errorf("Path, Dir = %q, %q", rt.Path, rt.Dir)
	}
	wantPkg := PackageRef{Root: filepath.Join(b.dir, "package"),
		ExpectedDigest: "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"}
	if rt.Package != wantPkg {
		t.Errorf("Package = %+v, want %+v", rt.Package, wantPkg)
	}
	if l := rt.Listen; l.API != "127.0.0.1:8107" || l.Metrics != "127.0.0.1:9107" || l.TLS != nil || l.TrustedProxies != nil {
		t.Errorf("Listen = %+v", rt.Listen)
	}
	if rt.Database.Driver != "sqlite" || rt.Database.Path != filepath.Join(b.dir, "data", "switchboard.db") ||
		rt.Database.Synchronous != "NORMAL" || !rt.Database.URL.IsZero() {
		t.Errorf("Database = %+v", rt.Database)
	}
	wantAuth := Authentication{
		OIDC: OIDC{Issuer: "https://id.example", Audience: "switchboard",
			JWKSURI: "https://id.example/.well-known/jwks.json", AllowedClients: []string{"case-system"}},
		ScopeClaim: "scope", ClientClaim: "client_id",
	}
	if !reflect.DeepEqual(rt.Authentication, wantAuth) {
		t.Errorf("Authentication = %+v, want %+v", rt.Authentication, wantAuth)
	}
	if len(rt.Providers) != 3 {
		t.Fatalf("Providers = %v", rt.Providers)
	}

	sms := rt.Providers["sms-gateway"]
	if sms.ID != "sms-gateway" || sms.Kind != KindHTTP || sms.HTTP == nil || sms.SMTP != nil || sms.Peer != nil {
		t.Fatalf("sms-gateway = %+v", sms)
	}
	h := sms.HTTP
	if h.BaseURL.String() != "https://sms.example/api/" || h.Timeout != 5*time.Second ||
		h.MaximumResponseBytes != 65536 || h.ConcurrencyLimit != 0 || h.RatePerSecond != 0 {
		t.Errorf("sms-gateway http = %+v", h)
	}
	if a := h.Authentication; a.Kind != AuthStaticAuthorization || a.Scheme != "Bearer" ||
		string(a.Token.Value()) != smsTokenValue || a.Token.Ref() != "secret:file/sms-token" {
		t.Errorf("sms-gateway authentication = %+v", a)
	}
	v := h.CallbackVerifier
	if v == nil || v.Kind != VerifierHMACSHA256Body || v.Header != "x-signature" || v.Encoding != "hex" ||
		string(v.Secret.Value()) != smsCallbackValue || string(v.Key()) != smsCallbackValue {
		t.Errorf("sms-gateway verifier = %+v", v)
	}

	mail := rt.Providers["mail-relay"].SMTP
	if mail == nil || mail.Host != "smtp.example" || mail.Port != 587 || mail.TLS != TLSStartTLS ||
		string(mail.Username.Value()) != smtpUserValue || string(mail.Password.Value()) != smtpPassValue ||
		mail.TrustedCAFile != "" || mail.Timeout != 30*time.Second {
		t.Fatalf("mail-relay = %+v", mail)
	}
	if d := mail.DKIM; d == nil || d.Domain != "example.org" || d.Selector != "s1" || string(d.PrivateKey.Value()) != b.dkimPEM {
		t.Errorf("mail-relay dkim = %+v", d)
	}

	peer := rt.Providers["peers"].Peer
	if peer == nil || string(peer.IdentityKey.Value()) != peerKeyValue ||
		!reflect.DeepEqual(peer.Listen, []string{"/ip4/0.0.0.0/tcp/4001", "/ip4/0.0.0.0/udp/4001/quic-v1"}) ||
		peer.Protocol != "/switchboard/1.0.0/message" || peer.RelayService.Enabled ||
		len(peer.Relays) != 1 || !strings.HasSuffix(peer.Relays[0], "/p2p/12D3KooWD3eckifWpRn9wQpMG9R9hX3sD158z7EqHWmweQAJU5SA") {
		t.Fatalf("peers = %+v", peer)
	}
	wantBook := map[string][]string{"12D3KooWQYhTNQdmr3ArTeUHRYzFg94BKyTkoWBDWez9kSCVe2Xo": {"/ip4/198.51.100.4/tcp/4001"}}
	if !reflect.DeepEqual(peer.AddressBook, wantBook) {
		t.Errorf("addressBook = %v", peer.AddressBook)
	}

	if want := (Dispatch{Concurrency: 8, BatchSize: 100, MaxPayloadBytes: 10485760, PollIntervalMilliseconds: 1000, LeaseSeconds: 60}); rt.Dispatch != want {
		t.Errorf("Dispatch = %+v, want %+v", rt.Dispatch, want)
	}
	if rt.Dispatch.PollInterval() != time.Second || rt.Dispatch.Lease() != time.Minute {
		t.Errorf("PollInterval, Lease = %v, %v", rt.Dispatch.PollInterval(), rt.Dispatch.Lease())
	}
	if string(rt.Audit.Key.Value()) != auditKeyValue {
		t.Errorf("audit key not resolved")
	}
	if rt.Retention != DefaultRetention() {
		t.Errorf("Retention = %+v", rt.Retention)
	}
	if rt.Sandbox != DefaultSandbox() {
		t.Errorf("Sandbox = %+v", rt.Sandbox)
	}
}

func TestLoadDefaults(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, doc(nil))
	if l := rt.Listen; l.API != DefaultAPIListen || l.Metrics != DefaultMetricsListen || l.TLS != nil || l.TrustedProxies != nil {
		t.Errorf("Listen = %+v", rt.Listen)
	}
	if rt.Authentication.ScopeClaim != "scope" || rt.Authentication.ClientClaim != "client_id" {
		t.Errorf("claims = %+v", rt.Authentication)
	}
	want := Dispatch{Concurrency: 64, BatchSize: 100, MaxPayloadBytes: 10485760, PollIntervalMilliseconds: 1000, LeaseSeconds: 60}
	if rt.Dispatch != want {
		t.Errorf("Dispatch = %+v, want %+v", rt.Dispatch, want)
	}
	if rt.Retention != (Retention{PayloadDays: 7, RecordDays: 90, SubmissionReceiptDays: 7, EventDays: 7}) {
		t.Errorf("Retention = %+v", rt.Retention)
	}
	wantSandbox := Sandbox{SourceBytes: 65536, StringBytes: 1048576, PrepareMilliseconds: 200,
		InterpretMilliseconds: 200, ReceiptMilliseconds: 100, CallStackFrames: 1000}
	if rt.Sandbox != wantSandbox {
		t.Errorf("Sandbox = %+v", rt.Sandbox)
	}
	if rt.Database.Synchronous != "NORMAL" || rt.Package.ExpectedDigest != "" || len(rt.Providers) != 0 {
		t.Errorf("Database, Package, Providers = %+v, %+v, %v", rt.Database, rt.Package, rt.Providers)
	}
}
