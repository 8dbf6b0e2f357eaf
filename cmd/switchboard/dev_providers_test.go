package main

import "testing"

func TestEnvSecretName(t *testing.T) {
	for name, want := range map[string]string{
		"twilio-auth-token": "TWILIO_AUTH_TOKEN",
		"vonage.secret":     "VONAGE_SECRET",
		"API_KEY":           "API_KEY",
		"9lives":            "_9LIVES",
	} {
		if got := envSecretName(name); got != want {
			t.Errorf("envSecretName(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestRealSecretsReadTheEnvironment(t *testing.T) {
	entry := map[string]any{
		"baseUrl":        "https://api.example/${ACCOUNT}/",
		"timeout":        5,
		"authentication": map[string]any{"kind": "basic", "usernameRef": "secret:env/ACCOUNT", "passwordRef": "secret:file/gw-token"},
		"list":           []any{"secret:file/other.key", "${WITH:-default}"},
	}
	vars := map[string]string{}
	realSecrets(entry, vars)
	auth := entry["authentication"].(map[string]any)
	if auth["passwordRef"] != "secret:env/GW_TOKEN" || auth["usernameRef"] != "secret:env/ACCOUNT" ||
		entry["list"].([]any)[0] != "secret:env/OTHER_KEY" || entry["timeout"] != 5 {
		t.Fatalf("rewritten entry %v", entry)
	}
	if len(vars) != 3 || vars["GW_TOKEN"] != "secret gw-token" || vars["ACCOUNT"] == "" || vars["OTHER_KEY"] == "" {
		t.Fatalf("variables %v: want GW_TOKEN, OTHER_KEY and ACCOUNT (a ${NAME} with a default needs none)", vars)
	}
}
