package packages

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestWriteStarterLoads(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "parent", "new-package")
	if err := WriteStarter(dir); err != nil {
		t.Fatal(err)
	}
	pkg := mustLoad(t, dir)
	if p := pkg.Provider("sms-gateway"); p == nil || p.Kind != "http" || p.Adapter == nil || p.Adapter.Receipts != "callback" {
		t.Errorf("sms-gateway: %+v", p)
	}
	if pkg.Template("appointment-reminder-sms", "1") == nil || pkg.Template("appointment-reminder", "1") == nil {
		t.Error("starter templates missing")
	}
	for client, role := range map[string]string{"case-system": "sender", "operations-console": "operator"} {
		ap := pkg.ProfileForClient(client)
		if ap == nil || ap.Role != role {
			t.Errorf("client %s: %+v", client, ap)
		}
	}
	if ap := pkg.AccessProfile("case-notices"); ap == nil || len(ap.RequiredScopes) != 1 || ap.RequiredScopes[0] != "messaging:send" {
		t.Errorf("case-notices: %+v", ap)
	}
	if ap := pkg.AccessProfile("operations"); ap == nil || len(ap.RequiredScopes) != 1 || ap.RequiredScopes[0] != "messaging:operate" {
		t.Errorf("operations: %+v", ap)
	}

	var rt struct {
		APIVersion string `yaml:"apiVersion"`
		Kind       string `yaml:"kind"`
		Database   struct{ Driver, Path string }
		Secrets    struct{ File struct{ Root string } }
		Authn      struct {
			OIDC struct {
				JWKSFile string `yaml:"jwksFile"`
			} `yaml:"oidc"`
		} `yaml:"authentication"`
		Providers map[string]struct {
			Kind             string
			BaseURL          string `yaml:"baseUrl"`
			Authentication   struct{ Kind string }
			CallbackVerifier struct {
				Kind, Header, Encoding string
				SecretRef              string `yaml:"secretRef"`
			} `yaml:"callbackVerifier"`
		}
		Audit struct {
			KeyRef string `yaml:"keyRef"`
		}
	}
	if err := yaml.Unmarshal([]byte(readFile(t, dir, "runtime.yaml")), &rt); err != nil {
		t.Fatal(err)
	}
	gw := rt.Providers["sms-gateway"]
	if rt.APIVersion != "switchboard/v1" || rt.Kind != "Runtime" || rt.Database.Driver != "sqlite" ||
		rt.Database.Path != "./data/switchboard.db" || rt.Secrets.File.Root != "./secrets" ||
		rt.Authn.OIDC.JWKSFile != "./secrets/jwks.json" || rt.Audit.KeyRef == "" ||
		gw.Kind != "http" || gw.BaseURL != "http://127.0.0.1:8108/" || gw.Authentication.Kind != "none" ||
		gw.CallbackVerifier.Kind != "hmac-sha256-body" || gw.CallbackVerifier.SecretRef != "secret:file/sms-callback" {
		t.Errorf("runtime.yaml: %+v", rt)
	}
	// The starter and the quickstart talk to the same mock gateway.
	if readFile(t, dir, "providers/sms-gateway/adapter.js") != readFile(t, quickstartDir, "providers/sms-gateway/adapter.js") {
		t.Error("the starter adapter differs from the quickstart adapter")
	}
}

func TestWriteStarterRefusesExisting(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "keep.txt", "mine")
	file := filepath.Join(dir, "keep.txt")
	for _, target := range []string{dir, file} {
		err := WriteStarter(target)
		var ie *InitError
		if !errors.As(err, &ie) || ie.Code() != CodeInitExists {
			t.Fatalf("WriteStarter(%s) = %v, want init.exists", target, err)
		}
	}
	if readFile(t, dir, "keep.txt") != "mine" {
		t.Error("existing content changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "switchboard.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Error("starter written into an existing folder")
	}
}

func TestQuickstartContents(t *testing.T) {
	t.Parallel()
	pkg := mustLoad(t, quickstartDir)
	sms := pkg.SenderProfile("reminders-sms")
	if sms == nil || sms.Channel != "sms" || sms.Provider != "sms-gateway" || sms.Sender != "+15550100" ||
		sms.MaximumSegments != 3 || sms.Retry != (RetryPolicy{5, 30, 3600}) || sms.OnUncertain != "hold" ||
		sms.AcceptDuplicates || sms.DefaultExpirySeconds != 86400 {
		t.Errorf("reminders-sms = %+v", sms)
	}
	email := pkg.SenderProfile("reminders-email")
	if email == nil || email.Retry != (RetryPolicy{5, 30, 3600}) || email.OnUncertain != "hold" || email.MaximumSegments != 0 {
		t.Errorf("reminders-email defaults = %+v", email)
	}
	if peer := pkg.SenderProfile("case-peers"); peer == nil || peer.Sender != "" || peer.Channel != "peer" || peer.Provider != "peers" {
		t.Errorf("case-peers = %+v", peer)
	}
	a := pkg.Provider("sms-gateway").Adapter
	if a == nil || a.Method != "POST" || a.ScriptPath != "providers/sms-gateway/adapter.js" || a.Source == "" ||
		len(a.RequestHeaders) != 2 || a.RequestHeaders[1] != "x-request-id" || a.ConcurrencyLimit != 128 {
		t.Errorf("adapter = %+v", a)
	}
	if pkg.Provider("mail-relay").Adapter != nil || pkg.Provider("peers").Adapter != nil {
		t.Error("smtp or peer provider has an adapter")
	}
	if !pkg.Provider("mail-relay").CanCarry("email") || pkg.Provider("mail-relay").CanCarry("sms") ||
		!pkg.Provider("sms-gateway").CanCarry("peer") || pkg.Provider("peers").CanCarry("email") {
		t.Error("CanCarry")
	}
	ap := pkg.ProfileForClient("inbox-reader")
	if ap == nil || ap.ID != "inbox-readers" || ap.Role != "receiver" {
		t.Errorf("inbox-reader: %+v", ap)
	}
	if cn := pkg.AccessProfile("case-notices"); !cn.AllowsSenderProfile("case-peers") || !cn.AllowsTemplate("case-update") ||
		cn.AllowsTemplate("nothing") || cn.DailyLimit != 10000000 {
		t.Errorf("case-notices: %+v", cn)
	}
	if pkg.Template("case-update", "2") != nil || pkg.ProfileForClient("nobody") != nil {
		t.Error("lookup of unknown names")
	}
	if !filepath.IsAbs(pkg.Root) {
		t.Errorf("root %q", pkg.Root)
	}
}

func TestPackageBuiltByHand(t *testing.T) {
	t.Parallel()
	p := &Package{
		Providers:      []*Provider{{ID: "p", Kind: "smtp"}},
		SenderProfiles: []*SenderProfile{{ID: "s"}},
		Templates:      []*Template{{ID: "t", Version: "1"}},
		AccessProfiles: []*AccessProfile{{ID: "a", Clients: []string{"c"}}},
	}
	if p.Provider("p") == nil || p.SenderProfile("s") == nil || p.Template("t", "1") == nil ||
		p.AccessProfile("a") == nil || p.ProfileForClient("c") == nil || p.Provider("x") != nil {
		t.Error("lookups on a hand-built package")
	}
}
