package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheckListsProvidersAndSenderProfiles(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	manifest := filepath.Join(dir, "switchboard.yaml")
	b, _ := os.ReadFile(manifest)
	edited := strings.Replace(string(b), "    provider: mail-relay\n", "    provider: mail-relay\n    fallbackProviders: [sms-gateway, chat-gateway]\n", 1)
	if err := os.WriteFile(manifest, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := cli(t, "check", "--package", dir)
	if code != 0 {
		t.Fatalf("check: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"provider sms-gateway http\n", "provider mail-relay smtp\n", "provider peers peer\n", "provider chat-gateway http\n",
		"provider fcm http\n", "provider apns http\n",
		"sender profile reminders-sms sms → sms-gateway\n", "sender profile team-chat chat → chat-gateway\n",
		"sender profile app-push push → fcm\n", "sender profile app-push-ios push → apns\n",
		"sender profile reminders-email email → mail-relay [sms-gateway, chat-gateway]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("check output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = cli(t, "check", "--package", dir, "-o", "json")
	var doc struct {
		Providers      []struct{ ID, Kind, Adapter string }
		SenderProfiles []struct {
			ID, Channel, Provider string
			FallbackProviders     []string
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Providers) != 6 || len(doc.SenderProfiles) != 6 {
		t.Fatalf("check -o json: exit %d, %s", code, out)
	}
	if p := doc.Providers[0]; p.ID != "sms-gateway" || p.Kind != "http" || p.Adapter != "providers/sms-gateway/adapter.js" {
		t.Errorf("providers[0] = %+v", p)
	}
	if sp := doc.SenderProfiles[1]; sp.ID != "reminders-email" || len(sp.FallbackProviders) != 2 {
		t.Errorf("senderProfiles[1] = %+v", sp)
	}
}

// TestCheckCompilesEveryAdapter: check refuses, as serve would, an adapter that does not
// compile, one without prepare, and one without receipt or callback under receipts: callback,
// naming the script with its line and column where the script is at fault.
func TestCheckCompilesEveryAdapter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, source string
		contains     []string
	}{
		{"syntax error", "function prepare(message, profile) {\n  return {target: 'x',, };\n}\nfunction receipt(r) { return null; }\n",
			[]string{"providers/sms-gateway/adapter.js:2:"}},
		{"top-level throw", "function prepare() { return {target: 'x'}; }\nfunction receipt() { return null; }\nthrow new Error('boom');\n",
			[]string{"providers/sms-gateway/adapter.js:3:", "boom"}},
		{"no prepare", "function receipt(r) { return null; }\n", []string{"providers/sms-gateway/adapter.js", "prepare"}},
		{"no receipt under receipts: callback", "function prepare() { return {target: 'x'}; }\n",
			[]string{"providers/sms-gateway/adapter.js", "neither receipt nor callback"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := quickstartCopy(t)
			if err := os.WriteFile(filepath.Join(dir, "providers", "sms-gateway", "adapter.js"), []byte(tc.source), 0o644); err != nil {
				t.Fatal(err)
			}
			_, errOut, code := cli(t, "check", "--package", dir)
			if code != 1 || !strings.Contains(errOut, "error[provider.invalid] providers/sms-gateway/adapter.js: ") {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			for _, want := range tc.contains {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr %q lacks %q", errOut, want)
				}
			}
			out, _, code := cli(t, "check", "--package", dir, "-o", "json")
			var doc struct {
				OK          bool
				Diagnostics []struct{ Code, Path string }
			}
			if code != 1 || json.Unmarshal([]byte(out), &doc) != nil || doc.OK || len(doc.Diagnostics) != 1 ||
				doc.Diagnostics[0].Code != "provider.invalid" || doc.Diagnostics[0].Path != "providers/sms-gateway/adapter.js" {
				t.Fatalf("json: exit %d, %s", code, out)
			}
		})
	}
}

// TestCheckWithConfigBuildsProviders: with --config, check builds each http provider from the
// runtime file as serve does, so a runtime-side refusal of the adapter is caught too.
func TestCheckWithConfigBuildsProviders(t *testing.T) {
	t.Parallel()
	dir := quickstartCopy(t)
	pkg, layout, _ := serveFixture(t, dir)
	if err := writeDevRuntime(layout, pkg, devSession{API: "http://127.0.0.1:1", Gateways: oneMockForAll(pkg, "http://127.0.0.1:2/"),
		Clients: clientsOf(pkg)}); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := cli(t, "--config", layout.runtimePath, "check"); code != 0 || !strings.Contains(out, "provider chat-gateway http") {
		t.Fatalf("check --config: exit %d\n%s%s", code, out, errOut)
	}
	// The sandbox limit of the runtime file applies: a source over it is refused.
	raw, _ := os.ReadFile(layout.runtimePath)
	if err := os.WriteFile(layout.runtimePath, append(raw, []byte("sandbox: {sourceBytes: 100}\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := cli(t, "--config", layout.runtimePath, "check")
	if code != 1 || !strings.Contains(errOut, "error[provider.invalid] providers/sms-gateway/adapter.js") || !strings.Contains(errOut, "over the limit of 100") {
		t.Fatalf("a source over the runtime's limit: exit %d, %q", code, errOut)
	}
}
