package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"

	"switchboard/engine/auth"
)

// gatewayLibsDir holds the Node project whose official gateway libraries sign (or check) the
// callbacks (package.json, its lock, gateways.test.mjs).
var gatewayLibsDir = filepath.Join("..", "..", "examples", "adapters", "gateway-libraries")

// requireGatewayLibs finds node and the installed libraries. Without them the test skips,
// saying what it needs, unless SWITCHBOARD_REQUIRE_GATEWAY_LIBS=1 (CI sets it), when it fails.
func requireGatewayLibs(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(gatewayLibsDir, "node_modules", "twilio", "package.json"))
	if err != nil || modErr != nil {
		msg := "needs node on PATH (apt-get install nodejs npm) and the gateways' libraries (npm ci in examples/adapters/gateway-libraries)"
		if os.Getenv("SWITCHBOARD_REQUIRE_GATEWAY_LIBS") == "1" {
			t.Fatal(msg + "; SWITCHBOARD_REQUIRE_GATEWAY_LIBS=1 requires them")
		}
		t.Skip(msg + " (SWITCHBOARD_REQUIRE_GATEWAY_LIBS=1 makes this a failure)")
	}
	return node
}

// libraryGateway is one bundled adapter the libraries test drives: its folder, the provider id
// it is declared under, and the golden case whose send answer and delivered callback it uses.
type libraryGateway struct {
	Name     string `json:"name"`     // what the Node side signs as (its library)
	Adapter  string `json:"adapter"`  // folder under examples/adapters
	Provider string `json:"provider"` // provider id in the test's package
	Case     string `json:"case"`     // golden case file under the adapter's testdata
	// Filled in by the test for the Node side.
	MessageID string            `json:"messageId"`
	Before    string            `json:"before"` // the message's status before any callback
	Secrets   map[string]string `json:"secrets"`
	PublicURL string            `json:"publicUrl,omitempty"` // the verifier's url, for URL-signing schemes
}

// libraryGateways lists every bundled adapter with a signing verifier. standard-webhooks runs
// twice, signed by the standardwebhooks library with the webhook- headers and by the svix
// library with the svix- ones, under two provider ids so that each has its own message.
func libraryGateways() []*libraryGateway {
	return []*libraryGateway{
		{Name: "twilio", Adapter: "twilio", Provider: "twilio", Case: "delivered.txtar"},
		{Name: "standardwebhooks", Adapter: "standard-webhooks", Provider: "standard-webhooks", Case: "batched-receipts.txtar"},
		{Name: "svix", Adapter: "standard-webhooks", Provider: "svix-sender", Case: "batched-receipts.txtar"},
		{Name: "sendgrid", Adapter: "sendgrid", Provider: "sendgrid", Case: "mail-and-events.txtar"},
		{Name: "telnyx", Adapter: "telnyx", Provider: "telnyx", Case: "delivered.txtar"},
		{Name: "plivo", Adapter: "plivo", Provider: "plivo", Case: "delivered.txtar"},
		{Name: "vonage", Adapter: "vonage", Provider: "vonage", Case: "json-receipts.txtar"},
		{Name: "mailgun", Adapter: "mailgun", Provider: "mailgun", Case: "delivered.txtar"},
	}
}

// goldenCase is what the test reads of a golden case: the profile its message is written for,
// its setup, and the gateway's answer to the first send.
type goldenCase struct {
	profile struct {
		Channel         string `yaml:"channel"`
		Sender          string `yaml:"sender"`
		MaximumSegments int    `yaml:"maximumSegments"`
	}
	setup struct {
		Env              map[string]string `yaml:"env"`
		IdempotentSubmit bool              `yaml:"idempotentSubmit"`
	}
	status int
	header http.Header
	body   []byte
}

func readGoldenCase(t *testing.T, g *libraryGateway) goldenCase {
	t.Helper()
	ar, err := txtar.ParseFile(filepath.Join("..", "..", "examples", "adapters", g.Adapter, "testdata", g.Case))
	if err != nil {
		t.Fatal(err)
	}
	var c goldenCase
	for _, f := range ar.Files {
		switch f.Name {
		case "message.yaml":
			var m struct {
				Profile yaml.Node `yaml:"profile"`
			}
			if err := yaml.Unmarshal(f.Data, &m); err != nil || m.Profile.Decode(&c.profile) != nil {
				t.Fatalf("%s/%s message.yaml: %v", g.Adapter, g.Case, err)
			}
		case "setup.yaml":
			if err := yaml.Unmarshal(f.Data, &c.setup); err != nil {
				t.Fatalf("%s/%s setup.yaml: %v", g.Adapter, g.Case, err)
			}
		case "send1/answer.http":
			head, body, _ := strings.Cut(strings.ReplaceAll(string(f.Data), "\r\n", "\n"), "\n\n")
			lines := strings.Split(head, "\n")
			c.status, err = strconv.Atoi(strings.Fields(lines[0])[0])
			if err != nil {
				t.Fatalf("%s/%s send1/answer.http: %v", g.Adapter, g.Case, err)
			}
			c.header = http.Header{}
			for _, l := range lines[1:] {
				if name, value, ok := strings.Cut(l, ":"); ok {
					c.header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
				}
			}
			c.body = []byte(strings.TrimSuffix(body, "\n"))
		}
	}
	if c.status == 0 || c.profile.Channel == "" {
		t.Fatalf("%s/%s has no message.yaml or send1/answer.http", g.Adapter, g.Case)
	}
	return c
}

// TestGatewayLibrariesCallbacks: for every bundled adapter with a signing verifier, a message
// goes out through a real `switchboard serve` to a stand-in that answers as the golden case
// shows; then gateways.test.mjs signs the case's delivered callback with the gateway's official
// Node library (twilio, standardwebhooks, svix), or signs it as the gateway documents with a
// fresh key and has the official library accept it first (SendGrid, Telnyx, Plivo, Vonage;
// Mailgun has no library that checks), and posts it. Copies with one byte changed, a wrong
// key, a stale timestamp or the wrong URL are refused and change nothing; the genuine one
// makes the message delivered.
func TestGatewayLibrariesCallbacks(t *testing.T) {
	t.Parallel()
	node := requireGatewayLibs(t)
	gateways := libraryGateways()
	cases := map[string]goldenCase{}
	for _, g := range gateways {
		cases[g.Provider] = readGoldenCase(t, g)
	}

	// The stand-in gateway: /<provider>/... answers as the provider's golden case shows.
	stand := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		provider, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		c, ok := cases[provider]
		if !ok {
			http.NotFound(w, r)
			return
		}
		for name, values := range c.header {
			w.Header()[name] = values
		}
		w.WriteHeader(c.status)
		_, _ = w.Write(c.body)
	}))
	t.Cleanup(stand.Close)

	dir := quickstartCopy(t)
	addGatewaysToPackage(t, dir, gateways, cases)
	pkg, err := loadPackage(dir)
	if err != nil {
		t.Fatal(err)
	}
	layout, err := prepareDevDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	api := loopbackAddr(t)
	if err := writeDevRuntime(layout, pkg, devSession{API: "http://" + api, Gateways: oneMockForAll(pkg, stand.URL), Clients: clientsOf(pkg)}); err != nil {
		t.Fatal(err)
	}
	// The environment the snippets read: what the golden cases give, else stand-ins.
	env := append(os.Environ(), "SWITCHBOARD_CONFIG=")
	for _, g := range gateways {
		snippet, err := os.ReadFile(filepath.Join("..", "..", "examples", "adapters", g.Adapter, "runtime-snippet.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range envRefPattern.FindAllStringSubmatch(string(snippet), -1) {
			if _, given := cases[g.Provider].setup.Env[m[1]]; !given {
				env = append(env, m[1]+"=stand-in-"+strings.ToLower(m[1]))
			}
		}
		for k, v := range cases[g.Provider].setup.Env {
			env = append(env, k+"="+v)
		}
	}
	secrets, extraEnv := gatewaySecrets(t, gateways)
	env = append(env, extraEnv...)
	runtimePath := filepath.Join(layout.root, "runtime-libraries.yaml")
	writeLibrariesRuntime(t, layout, runtimePath, api, stand.URL, gateways, secrets)

	serve := &scaleInstance{tb: t, bin: binary, runtime: runtimePath, env: env, api: "http://" + api, logs: &syncBuffer{}}
	t.Cleanup(func() {
		serve.kill()
		if t.Failed() {
			t.Logf("serve logs (tail):\n%s", tail(serve.logs.String(), 8000))
		}
	})
	serve.start()
	serve.waitReady(90 * time.Second)
	issuer, err := auth.LoadDevIssuer(layout.issuerKeyPath, devIssuer, devAudience)
	if err != nil {
		t.Fatal(err)
	}
	sender, _ := issuer.Mint("case-system", []string{"messaging:send"}, time.Hour, time.Now())
	s := &devStack{t: t, dir: dir, session: devSession{API: "http://" + api}}

	for _, g := range gateways {
		body := templateSubmission(t, dir, "lib-"+g.Provider, "appointment-reminder-sms", map[string]string{"phone": "+447700900123"})
		if cases[g.Provider].profile.Channel == "email" {
			body = templateSubmission(t, dir, "lib-"+g.Provider, "appointment-reminder", map[string]string{"email": "patient@example.org"})
		}
		var accepted map[string]any
		if resp, raw := s.do("POST", "/v1/messages", sender, "lib-"+g.Provider, body, &accepted); resp.StatusCode != 202 {
			t.Fatalf("%s: submit: %d %s", g.Provider, resp.StatusCode, raw)
		}
		g.MessageID = accepted["id"].(string)
	}
	for _, g := range gateways {
		view := s.waitStatus(sender, g.MessageID, 60*time.Second, "submitted", "sent")
		g.Before = view["status"].(string)
		g.Secrets = secrets[g.Provider]
		if g.Name == "twilio" || g.Name == "plivo" {
			g.PublicURL = "https://switchboard.example.org/v1/provider-callbacks/" + g.Provider
		}
	}

	spec, err := json.Marshal(map[string]any{"api": "http://" + api, "token": sender, "gateways": gateways})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "gateways.test.mjs")
	cmd.Dir = gatewayLibsDir
	cmd.Stdin = strings.NewReader(string(spec))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	passed := map[string]bool{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		t.Log(sc.Text())
		var line struct {
			Gateway string `json:"gateway"`
			OK      bool   `json:"ok"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.OK {
			passed[line.Gateway] = true
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("gateways.test.mjs: %v\n%s", err, stderr.String())
	}
	// What the libraries' callbacks did is in the database too.
	for _, g := range gateways {
		if !passed[g.Name] {
			t.Errorf("%s: gateways.test.mjs reported no pass", g.Name)
		}
		s.waitStatus(sender, g.MessageID, 10*time.Second, "delivered")
	}
}

// addGatewaysToPackage copies each adapter into the package as its provider and declares it,
// with a sender profile of its golden case's channel and sender that the sender role may use.
func addGatewaysToPackage(t *testing.T, dir string, gateways []*libraryGateway, cases map[string]goldenCase) {
	t.Helper()
	path := filepath.Join(dir, "switchboard.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var manifest map[string]any
	if err := yaml.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	providers, _ := manifest["providers"].([]any)
	profiles, _ := manifest["senderProfiles"].([]any)
	var sender map[string]any
	for _, ap := range manifest["accessProfiles"].([]any) {
		if m := ap.(map[string]any); m["id"] == "case-notices" {
			sender = m
		}
	}
	for _, g := range gateways {
		for _, name := range []string{"adapter.js", "provider.yaml"} {
			b, err := os.ReadFile(filepath.Join("..", "..", "examples", "adapters", g.Adapter, name))
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(dir, "providers", g.Provider, name), string(b))
		}
		c := cases[g.Provider]
		providers = append(providers, map[string]any{"id": g.Provider, "kind": "http", "idempotentSubmit": c.setup.IdempotentSubmit})
		profile := map[string]any{"id": "lib-" + g.Provider, "channel": c.profile.Channel, "provider": g.Provider, "sender": c.profile.Sender}
		if c.profile.Channel == "sms" {
			profile["maximumSegments"] = max(c.profile.MaximumSegments, 1)
		}
		profiles = append(profiles, profile)
		sender["senderProfiles"] = append(sender["senderProfiles"].([]any), "lib-"+g.Provider)
	}
	manifest["providers"], manifest["senderProfiles"] = providers, profiles
	out, err := yaml.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(out))
}

// fileRefPattern finds the secret files a runtime snippet names.
var fileRefPattern = regexp.MustCompile(`secret:file/([A-Za-z0-9._-]+)`)

// envRefPattern finds the environment variables a runtime snippet reads.
var envRefPattern = regexp.MustCompile(`(?:secret:env/|\$\{)([A-Za-z_][A-Za-z0-9_]*)`)

// writeFile writes a file, making its folder.
func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// gatewaySecrets makes each gateway's verifier secrets, fresh for the run: what the Node side
// signs with (secret, privateKey) beside what the runtime file is given (publicKey). It
// returns them by provider, and the environment that carries the ones a snippet reads there.
func gatewaySecrets(t *testing.T, gateways []*libraryGateway) (map[string]map[string]string, []string) {
	t.Helper()
	random := func(n int) []byte {
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return b
	}
	out := map[string]map[string]string{}
	var env []string
	for _, g := range gateways {
		s := map[string]string{}
		switch g.Name {
		case "standardwebhooks", "svix":
			s["secret"] = "whsec_" + base64.StdEncoding.EncodeToString(random(32))
		case "sendgrid":
			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			der, _ := x509.MarshalPKCS8PrivateKey(key)
			pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
			s["privateKey"] = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
			s["publicKey"] = base64.StdEncoding.EncodeToString(pub)
			env = append(env, "SENDGRID_WEBHOOK_PUBLIC_KEY="+s["publicKey"])
		case "telnyx":
			pub, priv, err := ed25519.GenerateKey(rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			der, _ := x509.MarshalPKCS8PrivateKey(priv)
			s["privateKey"] = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
			s["publicKey"] = base64.StdEncoding.EncodeToString(pub)
		default:
			s["secret"] = fmt.Sprintf("%x", random(16))
		}
		out[g.Provider] = s
	}
	return out, env
}

// writeLibrariesRuntime derives the runtime file from the dev one: the API on api, and each
// gateway's provider entry from its runtime snippet with baseUrl on the stand-in and the
// verifier holding this run's secrets (their files written beside the dev ones).
func writeLibrariesRuntime(t *testing.T, layout devPaths, path, api, standURL string, gateways []*libraryGateway, secrets map[string]map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(layout.runtimePath)
	if err != nil {
		t.Fatal(err)
	}
	var rt map[string]any
	if err := yaml.Unmarshal(raw, &rt); err != nil {
		t.Fatal(err)
	}
	rt["listen"] = map[string]any{"api": api, "metrics": ""}
	rt["secrets"] = map[string]any{"file": map[string]any{"root": "./secrets"}, "env": map[string]any{}}
	providers := rt["providers"].(map[string]any)
	for _, g := range gateways {
		snippet, err := os.ReadFile(filepath.Join("..", "..", "examples", "adapters", g.Adapter, "runtime-snippet.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Providers map[string]map[string]any `yaml:"providers"`
		}
		if err := yaml.Unmarshal(snippet, &doc); err != nil || len(doc.Providers) != 1 {
			t.Fatalf("%s/runtime-snippet.yaml: %v", g.Adapter, err)
		}
		var entry map[string]any
		for _, e := range doc.Providers {
			entry = e
		}
		entry["baseUrl"] = standURL + "/" + g.Provider + "/"
		// Every secret file the snippet names holds a stand-in; the verifier's is this run's.
		for _, m := range fileRefPattern.FindAllStringSubmatch(string(snippet), -1) {
			writeFile(t, filepath.Join(layout.secrets, m[1]), "stand-in-"+m[1])
		}
		verifier := entry["callbackVerifier"].(map[string]any)
		file := "libraries-" + g.Provider
		switch verifier["kind"] {
		case "ecdsa-p256":
			verifier["publicKey"] = secrets[g.Provider]["publicKey"]
		case "ed25519":
			writeFile(t, filepath.Join(layout.secrets, file), secrets[g.Provider]["publicKey"])
			verifier["publicKeyRef"] = "secret:file/" + file
		default:
			writeFile(t, filepath.Join(layout.secrets, file), secrets[g.Provider]["secret"])
			verifier["secretRef"] = "secret:file/" + file
		}
		if _, ok := verifier["url"]; ok {
			verifier["url"] = "https://switchboard.example.org/v1/provider-callbacks/" + g.Provider
		}
		providers[g.Provider] = entry
	}
	out, err := yaml.Marshal(rt)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, path, string(out))
}
