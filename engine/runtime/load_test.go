package runtime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestLoadDispatchValuesMustBePositive(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"concurrency", "batchSize", "maxPayloadBytes", "pollIntervalMilliseconds", "leaseSeconds"} {
		for _, value := range []string{"0", "-1", "1.5", "many"} {
			t.Run(key+"="+value, func(t *testing.T) {
				t.Parallel()
				b := setup(t)
				_, err := b.load(t, doc(map[string]string{"dispatch": "dispatch: {" + key + ": " + value + "}"}))
				d := requireDiag(t, err, CodeInvalid, "dispatch."+key)
				if d.Line != 7 || !strings.Contains(d.Message, "integer from 1") {
					t.Errorf("diagnostic = %v", d)
				}
				if ExitCode(err) != 1 {
					t.Errorf("ExitCode = %d, want 1", ExitCode(err))
				}
			})
		}
	}
}

func TestLoadSandboxMayOnlyLower(t *testing.T) {
	t.Parallel()
	limits := map[string]int{"sourceBytes": 65536, "stringBytes": 1048576, "prepareMilliseconds": 200,
		"interpretMilliseconds": 200, "receiptMilliseconds": 100, "callStackFrames": 1000}
	for key, limit := range limits {
		t.Run(key, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			raised := doc(map[string]string{"sandbox": "sandbox: {" + key + ": " + strconv.Itoa(limit+1) + "}"})
			_, err := b.load(t, raised)
			d := requireDiag(t, err, CodeInvalid, "sandbox."+key)
			if !strings.Contains(d.Message, "only lower") {
				t.Errorf("diagnostic = %v", d)
			}
			_, err = b.load(t, doc(map[string]string{"sandbox": "sandbox: {" + key + ": 0}"}))
			requireDiag(t, err, CodeInvalid, "sandbox."+key)

			rt := b.mustLoad(t, doc(map[string]string{"sandbox": "sandbox: {" + key + ": " + strconv.Itoa(limit/2) + "}"}))
			got := map[string]int{"sourceBytes": rt.Sandbox.SourceBytes, "stringBytes": rt.Sandbox.StringBytes,
				"prepareMilliseconds": rt.Sandbox.PrepareMilliseconds, "interpretMilliseconds": rt.Sandbox.InterpretMilliseconds,
				"receiptMilliseconds": rt.Sandbox.ReceiptMilliseconds, "callStackFrames": rt.Sandbox.CallStackFrames}
			for k, v := range got {
				want := limits[k]
				if k == key {
					want = limit / 2
				}
				if v != want {
					t.Errorf("%s = %d, want %d", k, v, want)
				}
			}
		})
	}
}

func TestLoadCollectsEveryProblemInLineOrder(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.load(t, doc(map[string]string{
		"database":  "database: {driver: mysql}",
		"listen":    "listen: {api: nope, extra: 1}",
		"retention": "retention: {payloadDays: 0}",
	}))
	ds := diagsOf(t, err)
	var members []string
	for i, d := range ds {
		members = append(members, d.Member)
		if i > 0 && d.Line < ds[i-1].Line {
			t.Errorf("diagnostics out of line order: %v", ds)
		}
	}
	want := []string{"listen.extra", "listen.api", "database.driver", "retention.payloadDays"}
	if strings.Join(members, ",") != strings.Join(want, ",") {
		t.Errorf("members = %v, want %v", members, want)
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != len(want) {
		t.Errorf("Error() has %d lines, want %d:\n%v", n, len(want), err)
	}
	if !strings.HasPrefix(err.Error(), "error[runtime.invalid] "+filepath.Join(b.dir, "runtime.yaml")+":4: listen.extra: unknown key") {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestLoadFileProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content, code string
		line                int
		exit                int
	}{
		{name: "empty file", content: "", code: CodeInvalid, exit: 1},
		{name: "syntax error names its line", content: "apiVersion: switchboard/v1\nkind: [Runtime\n", code: CodeInvalid, exit: 1},
		{name: "two documents", content: doc(nil) + "---\nkind: Runtime\n", code: CodeInvalid, exit: 1},
		{name: "not a mapping", content: "- a\n- b\n", code: CodeInvalid, line: 1, exit: 1},
		{name: "too large", content: "# " + strings.Repeat("x", maxRuntimeFileBytes) + "\n", code: CodeInvalid, exit: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.load(t, tc.content)
			ds := diagsOf(t, err)
			if len(ds) != 1 || ds[0].Code != tc.code || (tc.line != 0 && ds[0].Line != tc.line) {
				t.Errorf("diagnostics = %v", ds)
			}
			if ExitCode(err) != tc.exit {
				t.Errorf("ExitCode = %d, want %d", ExitCode(err), tc.exit)
			}
		})
	}

	t.Run("missing runtime file", func(t *testing.T) {
		t.Parallel()
		_, err := Load(filepath.Join(t.TempDir(), "absent.yaml"), nil)
		ds := diagsOf(t, err)
		if len(ds) != 1 || ds[0].Code != CodeUnreadable || ExitCode(err) != 3 {
			t.Errorf("diagnostics = %v, exit %d", ds, ExitCode(err))
		}
	})
	t.Run("runtime path is a folder", func(t *testing.T) {
		t.Parallel()
		_, err := Load(t.TempDir(), nil)
		if ds := diagsOf(t, err); len(ds) != 1 || ds[0].Code != CodeUnreadable {
			t.Errorf("diagnostics = %v", ds)
		}
	})
	t.Run("syntax error line", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, err := b.load(t, "apiVersion: switchboard/v1\nkind: Runtime\nlisten: {api: x\n  metrics: y: z\n")
		if ds := diagsOf(t, err); ds[0].Line == 0 || !strings.Contains(ds[0].Message, "not valid YAML") {
			t.Errorf("diagnostics = %v", ds)
		}
	})
}

func TestLoadPathsAreAbsolute(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := t.TempDir()
	caPEM := writeCA(t, b.dir)
	if err := os.WriteFile(filepath.Join(b.dir, "jwks.json"), []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := b.mustLoad(t, doc(map[string]string{
		"database":       "database: {driver: sqlite, path: " + filepath.Join(other, "state.db") + ", synchronous: full}",
		"authentication": `authentication: {oidc: {issuer: "http://127.0.0.1:9000", audience: sb, jwksFile: ./jwks.json, allowedClients: [c]}}`,
		"providers":      withSMTP("    host: smtp.example", "    tls: implicit", "    trustedCaFile: "+filepath.Base(caPEM)),
	}))
	if rt.Database.Path != filepath.Join(other, "state.db") || rt.Database.Synchronous != "FULL" {
		t.Errorf("Database = %+v", rt.Database)
	}
	if rt.Authentication.OIDC.JWKSFile != filepath.Join(b.dir, "jwks.json") || rt.Authentication.OIDC.JWKSURI != "" {
		t.Errorf("OIDC = %+v", rt.Authentication.OIDC)
	}
	mail := rt.Providers["mail"].SMTP
	if mail.TrustedCAFile != caPEM || mail.Port != 465 || mail.TLS != TLSImplicit || !mail.Username.IsZero() || mail.DKIM != nil {
		t.Errorf("SMTP = %+v", mail)
	}
}
