package runtime

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzEnvValue is what every variable of the fuzz environment holds; like the secret values,
// it must never show in a diagnostic unless the input itself holds it.
const fuzzEnvValue = "FUZZ-ENV-VALUE-4e1f"

// FuzzLoad feeds arbitrary bytes to the runtime file decoder. It must never panic; it returns
// either a runtime or a *LoadError of known codes, and never shows a secret or environment
// value the input does not itself contain.
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		specExample,
		doc(nil),
		doc(map[string]string{"providers": withHTTP(`    callbackVerifier: {kind: path-token, tokenRef: "secret:file/path-token"}`)}),
		doc(map[string]string{"providers": withSMTP("    host: 127.0.0.1", "    port: ${PORT:-2525}", "    tls: none")}),
		doc(map[string]string{"sandbox": "sandbox: {sourceBytes: 1024, callStackFrames: 100}", "dispatch": "dispatch: {leaseSeconds: 5}"}),
		"a: &x [1, *x]\n",
		"{<<: {a: 1}}",
		"providers: {x: &p {kind: peer}, y: *p}\n",
		"- 1\n- 2\n",
		"",
		"\xff\xfe",
		"apiVersion: switchboard/v1\n---\nkind: Runtime\n",
	} {
		f.Add([]byte(seed))
	}
	dir := f.TempDir()
	secrets := filepath.Join(dir, "secrets")
	for _, p := range []string{filepath.Join(dir, "package"), secrets} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			f.Fatal(err)
		}
	}
	values := map[string]string{"audit.key": auditKeyValue, "sms-token": smsTokenValue,
		"sms-callback": smsCallbackValue, "path-token": pathTokenValue, "peer.key": peerKeyValue}
	for name, value := range values {
		if err := os.WriteFile(filepath.Join(secrets, name), []byte(value), 0o600); err != nil {
			f.Fatal(err)
		}
	}
	abs := filepath.Join(dir, "runtime.yaml")
	getenv := func(string) string { return fuzzEnvValue }
	known := map[string]bool{CodeInvalid: true, CodeUnreadable: true, CodeSecretUnreadable: true, CodeSecretInsecure: true}

	f.Fuzz(func(t *testing.T, data []byte) {
		rt, err := parse(abs, data, getenv)
		if err == nil {
			if rt == nil || rt.Path != abs {
				t.Fatalf("no error and runtime %v", rt)
			}
			return
		}
		if rt != nil {
			t.Fatalf("a runtime and an error: %v", err)
		}
		var le *LoadError
		if !errors.As(err, &le) || len(le.Diagnostics) == 0 {
			t.Fatalf("error %T without diagnostics: %v", err, err)
		}
		for _, d := range le.Diagnostics {
			if !known[d.Code] || d.Path != abs || d.Message == "" {
				t.Fatalf("bad diagnostic %+v", d)
			}
		}
		text := err.Error()
		for _, v := range append([]string{fuzzEnvValue}, mapValues(values)...) {
			if strings.Contains(text, v) && !bytes.Contains(data, []byte(v)) {
				t.Fatalf("a value the input does not hold leaked into the error:\n%s", text)
			}
		}
	})
}

func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
