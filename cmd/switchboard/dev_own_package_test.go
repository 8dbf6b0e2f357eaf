package main

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"switchboard/providers/httpgw"
)

// ownPackageManifest is a package of a user's own: SMS through the bundled Telnyx adapter
// (golden cases in providers/telnyx/testdata) and through the quickstart's adapter (none).
const ownPackageManifest = `apiVersion: switchboard/v1
kind: Package
providers:
  - {id: telnyx, kind: http}
  - {id: sms-gateway, kind: http}
senderProfiles:
  - {id: via-telnyx, channel: sms, provider: telnyx, sender: "+15550100", maximumSegments: 3}
  - {id: via-mock, channel: sms, provider: sms-gateway, sender: "+15550100", maximumSegments: 3}
templates:
  - {id: appointment-reminder-sms, version: "1"}
accessProfiles:
  - id: app
    role: sender
    clients: [app]
    requiredScopes: [messaging:send]
    senderProfiles: [via-telnyx, via-mock]
    templates: [appointment-reminder-sms]
    requestsPerMinute: 600
    burst: 100
`

// ownPackage writes that package: examples/adapters/telnyx (with its golden cases) as
// providers/telnyx, the quickstart's SMS adapter and template.
func ownPackage(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "own")
	examples := filepath.Join("..", "..", "examples")
	copyTree(t, filepath.Join(examples, "adapters", "telnyx"), filepath.Join(dir, "providers", "telnyx"))
	copyTree(t, filepath.Join(examples, "quickstart", "providers", "sms-gateway"), filepath.Join(dir, "providers", "sms-gateway"))
	copyTree(t, filepath.Join(examples, "quickstart", "templates", "appointment-reminder-sms"),
		filepath.Join(dir, "templates", "appointment-reminder-sms"))
	if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte(ownPackageManifest), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// ownSubmission is an SMS through a sender profile of ownPackage.
func ownSubmission(t *testing.T, dir, profile string) map[string]any {
	t.Helper()
	return templateSubmission(t, dir, profile, "appointment-reminder-sms", map[string]string{"phone": "+15550100123"})
}

func TestDevAnswersOwnAdapterAsItsGoldenCasesSay(t *testing.T) {
	t.Parallel()
	dir := ownPackage(t)
	s := startDev(t, dir)
	banner := s.logs.String()
	for _, want := range []string{
		binary + " dev: API " + s.session.API + ", metrics " + s.session.Metrics,
		"provider telnyx: answered as its golden cases say (delivered.txtar, inbound-reply.txtar, out-of-order.txtar, refusals.txtar, undelivered.txtar)",
		"provider sms-gateway: mock gateway " + s.session.Gateways["sms-gateway"] + " (the quickstart's protocol only); no golden cases: " +
			"write providers/sms-gateway/testdata/*.txtar (switchboard adapter init) or run with --real sms-gateway",
		"get a token: " + binary + " dev token app " + dir,
	} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner lacks %q:\n%s", want, banner)
		}
	}
	if p := s.session.Providers["telnyx"]; p.Mode != devModeCases || !strings.HasSuffix(p.URL, "/v2/") || s.session.Gateways["telnyx"] != "" {
		t.Fatalf("session.json providers.telnyx %+v, gateways %v", p, s.session.Gateways)
	}
	if p := s.session.Providers["sms-gateway"]; p.Mode != devModeMock || s.session.Gateway != s.session.Gateways["sms-gateway"] {
		t.Fatalf("session.json providers.sms-gateway %+v, gateway %q", p, s.session.Gateway)
	}
	resp, err := http.Get(s.session.Metrics)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(metrics), "switchboard_") {
		t.Fatalf("session.json metrics %s: %d", s.session.Metrics, resp.StatusCode)
	}

	token := s.token("app")
	var ids []string
	for i, profile := range []string{"via-telnyx", "via-telnyx", "via-mock"} {
		var accepted map[string]any
		resp, raw := s.do("POST", "/v1/messages", token, "own-"+strconv.Itoa(i), ownSubmission(t, dir, profile), &accepted)
		if resp.StatusCode != 202 {
			t.Fatalf("submit %s: %d %s", profile, resp.StatusCode, raw)
		}
		ids = append(ids, accepted["id"].(string))
	}
	// delivered.txtar answers 200 with Telnyx's id, then its callbacks (sent, delivered, a
	// duplicate), signed for the dev runtime's verifier, deliver the message.
	for _, id := range ids {
		view := s.waitStatus(token, id, 30*time.Second, "delivered")
		if view["dispatch"] != "submitted" || view["report"] != "delivered" {
			t.Fatalf("view %v", view)
		}
	}
	logs := s.logs.String()
	for _, want := range []string{`"reference":"40385f64-5717-4562-b3fc-2c963f66afa6-dev1"`, `"reference":"40385f64-5717-4562-b3fc-2c963f66afa6-dev2"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the stand-in's log lacks %s: each send gets its own reference", want)
		}
	}
	if strings.Contains(logs, "callback was refused") {
		t.Errorf("a golden case's callback did not verify:\n%s", logs)
	}
}

// realTelnyx is a real HTTP server standing as Telnyx: it takes a message with the API key
// and posts its delivery report, signed with the webhook key, to the callback route.
type realTelnyx struct {
	srv *httptest.Server
	key ed25519.PrivateKey

	mu          sync.Mutex
	callbackURL string
	auth        []string
}

func newRealTelnyx(t *testing.T) *realTelnyx {
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	g := &realTelnyx{key: key}
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		g.mu.Lock()
		g.auth = append(g.auth, r.Method+" "+r.URL.Path+" "+r.Header.Get("Authorization"))
		g.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer real-api-key" || r.URL.Path != "/v2/messages" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"data": {"record_type": "message", "id": "real-0001", "to": [{"status": "queued"}], "errors": []}}`)
		go g.report("real-0001")
	}))
	t.Cleanup(g.srv.Close)
	return g
}

// report posts message.finalized (delivered) for a reference, as Telnyx signs it.
func (g *realTelnyx) report(ref string) {
	body := fmt.Sprintf(`{"data": {"record_type": "event", "id": "evt-%s", "event_type": "message.finalized", "payload": `+
		`{"id": %q, "to": [{"phone_number": "+15550100123", "status": "delivered"}], "errors": []}}}`, ref, ref)
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	g.mu.Lock()
	url := g.callbackURL
	g.mu.Unlock()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(httpgw.Ed25519TimestampHeader, ts)
	req.Header.Set(httpgw.Ed25519SignatureHeader, base64.StdEncoding.EncodeToString(ed25519.Sign(g.key, []byte(ts+"|"+body))))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
}

func (g *realTelnyx) requests() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.auth...)
}

func TestDevRealSendsOneProviderToItsGateway(t *testing.T) {
	t.Parallel()
	dir := ownPackage(t)
	gw := newRealTelnyx(t)
	// The snippet's baseUrl, as a user would point it elsewhere: through the environment.
	snippet := filepath.Join(dir, "providers", "telnyx", "runtime-snippet.yaml")
	b, _ := os.ReadFile(snippet)
	if err := os.WriteFile(snippet, []byte(strings.Replace(string(b), `"https://api.telnyx.com/v2/"`, `"${TELNYX_BASE_URL}/v2/"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}

	// Without its secrets, --real names each variable it reads them from.
	_, errOut, code := cli(t, "dev", dir, "--port", "0", "--real", "telnyx")
	if code != 3 || !strings.Contains(errOut, "dev.secret-missing") ||
		!strings.Contains(errOut, "TELNYX_API_KEY (secret telnyx-api-key)") || !strings.Contains(errOut, "TELNYX_PUBLIC_KEY") ||
		!strings.Contains(errOut, "TELNYX_BASE_URL") {
		t.Fatalf("--real without secrets: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := cli(t, "dev", dir, "--port", "0", "--real", "nope"); code != 2 || !strings.Contains(errOut, `no http provider "nope"`) {
		t.Fatalf("--real nope: exit %d\n%s", code, errOut)
	}

	pub := base64.StdEncoding.EncodeToString(gw.key.Public().(ed25519.PublicKey)) // as Telnyx shows it
	s := startDevWith(t, dir, []string{"TELNYX_BASE_URL=" + gw.srv.URL, "TELNYX_API_KEY=real-api-key", "TELNYX_PUBLIC_KEY=" + pub},
		"--real", "telnyx")
	gw.mu.Lock()
	gw.callbackURL = s.session.API + "/v1/provider-callbacks/telnyx"
	gw.mu.Unlock()
	if p := s.session.Providers["telnyx"]; p.Mode != devModeReal || p.URL != "${TELNYX_BASE_URL}/v2/" {
		t.Fatalf("session.json providers.telnyx %+v", p)
	}
	if !strings.Contains(s.logs.String(), "provider telnyx: the real gateway ${TELNYX_BASE_URL}/v2/ (--real") {
		t.Fatalf("the banner does not say telnyx is real:\n%s", s.logs.String())
	}
	token := s.token("app")
	var accepted map[string]any
	resp, raw := s.do("POST", "/v1/messages", token, "real-1", ownSubmission(t, dir, "via-telnyx"), &accepted)
	if resp.StatusCode != 202 {
		t.Fatalf("submit: %d %s", resp.StatusCode, raw)
	}
	// The real gateway took it with the real API key, and its report, signed with the real
	// webhook key, verified against the public key from the environment.
	view := s.waitStatus(token, accepted["id"].(string), 30*time.Second, "delivered")
	if got := gw.requests(); len(got) != 1 || got[0] != "POST /v2/messages Bearer real-api-key" {
		t.Fatalf("the real gateway saw %q", got)
	}
	if view["report"] != "delivered" {
		t.Fatalf("view %v", view)
	}
	raw, err := os.ReadFile(filepath.Join(dir, ".switchboard", "dev", "runtime.yaml"))
	if err != nil || strings.Contains(string(raw), "real-api-key") || !strings.Contains(string(raw), "secret:env/TELNYX_API_KEY") {
		t.Fatalf("the dev runtime file must name the secret, never hold it:\n%s", raw)
	}
}
