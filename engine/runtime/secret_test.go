package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// auditFrom is a runtime file whose audit key is the given reference.
func auditFrom(ref string) string {
	return doc(map[string]string{"audit": `audit: {keyRef: "` + ref + `"}`})
}

func TestSecretFileModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode  os.FileMode
		ok    bool
		shown string
	}{
		{mode: 0o600, ok: true},
		{mode: 0o400, ok: true},
		{mode: 0o644, shown: "0644"},
		{mode: 0o640, shown: "0640"},
		{mode: 0o604, shown: "0604"},
		{mode: 0o700, shown: "0700"},
		{mode: 0o660, shown: "0660"},
		{mode: 0o600 | os.ModeSetuid, shown: "4600"},
	}
	for _, tc := range tests {
		t.Run(tc.mode.String(), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.secret(t, "key", auditKeyValue, tc.mode)
			rt, err := b.load(t, auditFrom("secret:file/key"))
			if tc.ok {
				if err != nil {
					t.Fatalf("Load: %v", err)
				}
				if !bytes.Equal(rt.Audit.Key.Value(), []byte(auditKeyValue)) || rt.Audit.Key.Ref() != "secret:file/key" {
					t.Errorf("audit key = %v", rt.Audit.Key)
				}
				return
			}
			d := requireDiag(t, err, CodeSecretInsecure, "audit.keyRef")
			if !strings.Contains(d.Message, "mode "+tc.shown) || d.Line != 7 {
				t.Errorf("diagnostic = %v, want it to name mode %s on line 7", d, tc.shown)
			}
			if ExitCode(err) != 1 {
				t.Errorf("ExitCode = %d, want 1", ExitCode(err))
			}
		})
	}
}

func TestSecretFileRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		prepare func(t *testing.T, b *bundle) // makes secrets/key
		code    string
		exit    int
	}{
		{name: "missing", prepare: func(*testing.T, *bundle) {}, code: CodeSecretUnreadable, exit: 3},
		{name: "empty", prepare: func(t *testing.T, b *bundle) { b.secret(t, "key", "", 0o600) }, code: CodeSecretUnreadable, exit: 3},
		{name: "symbolic link", prepare: func(t *testing.T, b *bundle) {
			target := filepath.Join(b.dir, "elsewhere")
			if err := os.WriteFile(target, []byte(auditKeyValue), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(b.secrets, "key")); err != nil {
				t.Fatal(err)
			}
		}, code: CodeSecretInsecure, exit: 1},
		{name: "folder", prepare: func(t *testing.T, b *bundle) { mustMkdir(t, filepath.Join(b.secrets, "key")) }, code: CodeSecretInsecure, exit: 1},
		{name: "too large", prepare: func(t *testing.T, b *bundle) {
			b.secret(t, "key", strings.Repeat("k", maxSecretBytes+1), 0o600)
		}, code: CodeInvalid, exit: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			tc.prepare(t, b)
			_, err := b.load(t, auditFrom("secret:file/key"))
			d := requireDiag(t, err, tc.code, "audit.keyRef")
			if !strings.Contains(d.Message, "key") {
				t.Errorf("message %q does not name the secret file", d.Message)
			}
			if ExitCode(err) != tc.exit {
				t.Errorf("ExitCode = %d, want %d", ExitCode(err), tc.exit)
			}
		})
	}
}

func TestSecretEnv(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.env["AUDIT_KEY"] = auditKeyValue
	b.env["DATABASE_URL"] = databaseURLValue
	rt := b.mustLoad(t, doc(map[string]string{
		"database": `database: {driver: postgres, urlRef: "secret:env/DATABASE_URL"}`,
		"audit":    `audit: {keyRef: "secret:env/AUDIT_KEY"}`,
	}))
	if string(rt.Database.URL.Value()) != databaseURLValue || rt.Database.URL.Ref() != "secret:env/DATABASE_URL" ||
		rt.Database.Path != "" || rt.Database.Synchronous != "" {
		t.Errorf("Database = %+v", rt.Database)
	}
	if string(rt.Audit.Key.Value()) != auditKeyValue {
		t.Errorf("audit key not read from the environment")
	}
	// The copy Value returns is the caller's own.
	v := rt.Audit.Key.Value()
	v[0] ^= 0xff
	if string(rt.Audit.Key.Value()) != auditKeyValue {
		t.Errorf("changing Value's result changed the secret")
	}
}

// TestSecretValuesNeverInErrors loads files in which every secret-bearing member fails after
// its value was read, and checks no value shows in any rendering of the error.
func TestSecretValuesNeverInErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	leaks := map[string]string{
		"loose":   "LEAK-loose-file-0644",
		"short":   "LEAK-short",
		"newline": "LEAK-token-with-newline\n",
		"nowhsec": "LEAK-not-a-whsec-secret",
		"tiny":    "LEAK-t",
		"notpem":  "LEAK-not-a-pem-key",
		"colon":   "LEAK:user",
	}
	for name, value := range leaks {
		mode := os.FileMode(0o600)
		if name == "loose" {
			mode = 0o644
		}
		b.secret(t, name, value, mode)
	}
	b.env["AUDIT"] = "LEAK-env-audit-key"
	b.env["BASE"] = "http://LEAK-env-host.example/api/"
	b.env["PORT"] = "LEAK-env-port"
	b.env["DBURL"] = "postgres://LEAK-env-db\r\n"
	b.env["JWKS"] = "/LEAK-env-path/jwks.json"
	_, err := b.load(t, doc(map[string]string{
		"database":       `database: {driver: postgres, urlRef: "secret:env/DBURL"}`,
		"authentication": `authentication: {oidc: {issuer: "https://id.example", audience: sb, jwksFile: "${JWKS}", allowedClients: [c]}}`,
		"providers": `providers:
  a:
    kind: http
    baseUrl: "${BASE}"
    authentication: {kind: static-authorization, tokenRef: "secret:file/newline"}
    callbackVerifier: {kind: standard-webhooks, secretRef: "secret:file/nowhsec"}
  b:
    kind: http
    baseUrl: "https://b.example/"
    authentication: {kind: basic, usernameRef: "secret:file/colon", passwordRef: "secret:file/loose"}
    callbackVerifier: {kind: path-token, tokenRef: "secret:file/tiny"}
  c:
    kind: smtp
    host: smtp.example
    port: "${PORT}"
    dkim: {domain: example.org, selector: s1, privateKeyRef: "secret:file/notpem"}
  d:
    kind: http
    baseUrl: "https://d.example/"
    authentication: {kind: static-api-key, header: x-api-key, tokenRef: "LEAK-literal-token-in-ref"}`,
		"audit": `audit: {keyRef: "secret:env/AUDIT"}`,
	}))
	ds := diagsOf(t, err)
	if len(ds) < 11 {
		t.Errorf("want at least 11 diagnostics, got %d:\n%v", len(ds), err)
	}
	encoded, jerr := json.Marshal(ds)
	if jerr != nil {
		t.Fatal(jerr)
	}
	for _, text := range []string{err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", ds), string(encoded)} {
		if strings.Contains(text, "LEAK") {
			t.Errorf("a secret or environment value leaked into the error:\n%s", text)
		}
	}
}

func TestSecretNeverPrintsItsValue(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, specExample)
	s := rt.Audit.Key
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("loaded", "key", s, "runtime", rt)
	renderings := []string{
		s.String(), fmt.Sprint(s), fmt.Sprintf("%s|%v|%+v|%#v|%q|%x|%X|%d|%10.3s", s, s, s, s, s, s, s, s, s),
		fmt.Sprintf("%v %+v %#v", rt.Audit, rt.Audit, rt.Audit),
		fmt.Sprintf("%+v %#v", *rt.Providers["sms-gateway"].HTTP, rt.Providers["sms-gateway"].HTTP.Authentication),
		fmt.Sprintf("%+v", *rt.Providers["mail-relay"].SMTP.DKIM),
		logged.String(),
	}
	encoded, err := json.Marshal(rt)
	if err != nil {
		t.Fatal(err)
	}
	renderings = append(renderings, string(encoded))
	for _, text := range renderings {
		for _, value := range []string{auditKeyValue, smsTokenValue, smsCallbackValue, "PRIVATE KEY"} {
			if strings.Contains(text, value) {
				t.Errorf("rendering shows a secret value: %s", text)
			}
		}
	}
	if s.String() != "secret:file/audit.key" || !strings.Contains(string(encoded), `"secret:file/audit.key"`) {
		t.Errorf("String = %q; JSON should carry the reference", s.String())
	}
	var zero Secret
	if !zero.IsZero() || s.IsZero() || zero.Value() != nil {
		t.Errorf("IsZero: zero=%v loaded=%v", zero.IsZero(), s.IsZero())
	}
	if got := NewSecret("secret:env/X", []byte("v")); string(got.Value()) != "v" || got.Ref() != "secret:env/X" {
		t.Errorf("NewSecret = %v", got)
	}
}

func TestStandardWebhooksKey(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, doc(map[string]string{"providers": withHTTP(`    callbackVerifier: {kind: standard-webhooks, secretRef: "secret:file/webhook"}`)}))
	v := rt.Providers["sms"].HTTP.CallbackVerifier
	want, ok := decodeWebhookSecret([]byte(webhookValue))
	if !ok || !bytes.Equal(v.Key(), want) || len(want) != 24 {
		t.Errorf("Key = %x, want %x", v.Key(), want)
	}
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	le := func(codes ...string) error {
		e := &LoadError{}
		for _, c := range codes {
			e.Diagnostics = append(e.Diagnostics, Diagnostic{Code: c})
		}
		return e
	}
	tests := []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("other"), 1},
		{le(), 1},
		{le(CodeInvalid), 1},
		{le(CodeSecretInsecure), 1},
		{le(CodeUnreadable), 3},
		{le(CodeSecretUnreadable, CodeUnreadable), 3},
		{le(CodeSecretUnreadable, CodeInvalid), 1},
		{fmt.Errorf("serve: %w", le(CodeSecretUnreadable)), 3},
	}
	for i, tc := range tests {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("case %d: ExitCode(%v) = %d, want %d", i, tc.err, got, tc.want)
		}
	}
}
