package runtime

import (
	"strings"
	"testing"

	"switchboard/packages"
)

const specDigest = "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

// specPackage returns a package that matches specExample exactly.
func specPackage() *packages.Package {
	return &packages.Package{
		Digest: specDigest,
		Providers: []*packages.Provider{
			{ID: "sms-gateway", Kind: "http", Adapter: &packages.Adapter{Receipts: "callback", ConcurrencyLimit: 16, RatePerSecond: 100}},
			{ID: "mail-relay", Kind: "smtp"},
			{ID: "peers", Kind: "peer"},
		},
		AccessProfiles: []*packages.AccessProfile{
			{ID: "case-notices", Role: "sender", Clients: []string{"case-system"}},
		},
	}
}

func TestCheckPackage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		runtime func(string) string // edits specExample
		pkg     func(*packages.Package)
		member  string
		line    int
	}{
		{name: "digest differs from the pin", pkg: func(p *packages.Package) { p.Digest = "sha256:" + strings.Repeat("0", 64) },
			member: "package.expectedDigest", line: 3},
		{name: "package provider without connection", pkg: func(p *packages.Package) {
			p.Providers = append(p.Providers, &packages.Provider{ID: "fax", Kind: "http", Adapter: &packages.Adapter{Receipts: "none"}})
		}, member: "providers.fax", line: 11},
		{name: "runtime provider the package does not declare", pkg: func(p *packages.Package) { p.Providers = p.Providers[:2] },
			member: "providers.peers", line: 26},
		{name: "kind differs", pkg: func(p *packages.Package) { p.Providers[1].Kind = "http" },
			member: "providers.mail-relay.kind", line: 20},
		{name: "client not allowed", pkg: func(p *packages.Package) {
			p.AccessProfiles = append(p.AccessProfiles, &packages.AccessProfile{ID: "ops", Role: "operator", Clients: []string{"ops-console"}})
		}, member: "authentication.oidc.allowedClients", line: 8},
		{name: "callback receipts without verifier", runtime: func(s string) string {
			return strings.Replace(s, `    callbackVerifier: {kind: hmac-sha256-body, header: x-signature, encoding: hex, secretRef: "secret:file/sms-callback"}`+"\n", "", 1)
		}, member: "providers.sms-gateway.callbackVerifier", line: 12},
		{name: "verifier without callback receipts", pkg: func(p *packages.Package) { p.Providers[0].Adapter.Receipts = "none" },
			member: "providers.sms-gateway.callbackVerifier", line: 18},
		{name: "concurrency above the adapter's", runtime: func(s string) string {
			return strings.Replace(s, "    timeoutMilliseconds: 5000\n", "    timeoutMilliseconds: 5000\n    concurrencyLimit: 32\n", 1)
		}, member: "providers.sms-gateway.concurrencyLimit", line: 16},
		{name: "rate above the adapter's", runtime: func(s string) string {
			return strings.Replace(s, "    timeoutMilliseconds: 5000\n", "    timeoutMilliseconds: 5000\n    ratePerSecond: 100.5\n", 1)
		}, member: "providers.sms-gateway.ratePerSecond", line: 16},
		{name: "webhook of an unknown access profile", runtime: func(s string) string {
			return s + "webhooks:\n  app:\n    url: \"https://app.example/e\"\n    secretRef: \"secret:file/webhook\"\n    accessProfiles: [case-notices, nobody]\n"
		}, member: "webhooks.app.accessProfiles", line: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			text := specExample
			if tc.runtime != nil {
				text = tc.runtime(text)
			}
			rt := b.mustLoad(t, text)
			pkg := specPackage()
			if tc.pkg != nil {
				tc.pkg(pkg)
			}
			err := rt.CheckPackage(pkg)
			ds := diagsOf(t, err)
			if len(ds) != 1 || ds[0].Member != tc.member || ds[0].Code != CodeInvalid || (tc.line != 0 && ds[0].Line != tc.line) {
				t.Errorf("diagnostics = %v, want one at %s line %d", ds, tc.member, tc.line)
			}
			if ExitCode(err) != 1 {
				t.Errorf("ExitCode = %d, want 1", ExitCode(err))
			}
		})
	}
}

func TestCheckPackageAccepts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, specExample)
	if err := rt.CheckPackage(specPackage()); err != nil {
		t.Fatalf("CheckPackage: %v", err)
	}
	// Lowering the adapter's limits, and limits against an adapter that sets none, are fine.
	lowered := strings.Replace(specExample, "    timeoutMilliseconds: 5000\n",
		"    timeoutMilliseconds: 5000\n    concurrencyLimit: 4\n    ratePerSecond: 12.5\n", 1)
	rt = b.mustLoad(t, lowered)
	if err := rt.CheckPackage(specPackage()); err != nil {
		t.Errorf("CheckPackage with lowered limits: %v", err)
	}
	pkg := specPackage()
	pkg.Providers[0].Adapter.ConcurrencyLimit, pkg.Providers[0].Adapter.RatePerSecond = 0, 0
	if err := rt.CheckPackage(pkg); err != nil {
		t.Errorf("CheckPackage against an adapter without limits: %v", err)
	}
	if h := rt.Providers["sms-gateway"].HTTP; h.ConcurrencyLimit != 4 || h.RatePerSecond != 12.5 {
		t.Errorf("limits = %d, %v", h.ConcurrencyLimit, h.RatePerSecond)
	}
	if err := rt.CheckPackage(nil); err == nil {
		t.Errorf("CheckPackage(nil) succeeded")
	}
}
