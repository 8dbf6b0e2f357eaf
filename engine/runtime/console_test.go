package runtime

import (
	"strings"
	"testing"

	"switchboard/packages"
)

// consoleRuntime is the SPEC example with the operator client allowed and a console member.
func consoleRuntime(console string) string {
	text := strings.Replace(specExample, "allowedClients: [case-system]", "allowedClients: [case-system, ops-console]", 1)
	return strings.TrimRight(text, "\n") + "\n" + console + "\n"
}

func consolePackage() *packages.Package {
	p := specPackage()
	p.AccessProfiles = append(p.AccessProfiles, &packages.AccessProfile{ID: "ops", Role: "operator", Clients: []string{"ops-console"}})
	return p
}

// TestConsoleMember reads the console member and checks its client against the package: an
// operator's client is accepted; any other is refused at the line of clientId.
func TestConsoleMember(t *testing.T) {
	t.Parallel()
	b := setup(t)
	rt := b.mustLoad(t, consoleRuntime("console: {enabled: true, clientId: ops-console}"))
	if !rt.Console.Enabled || rt.Console.ClientID != "ops-console" {
		t.Fatalf("console = %+v", rt.Console)
	}
	if err := rt.CheckPackage(consolePackage()); err != nil {
		t.Fatalf("CheckPackage: %v", err)
	}
	if rt := b.mustLoad(t, specExample); rt.Console.Enabled {
		t.Fatal("the console is on without the member")
	}
	if rt := b.mustLoad(t, consoleRuntime("console: {enabled: false}")); rt.Console.Enabled {
		t.Fatal("enabled: false turned the console on")
	}
	lines := strings.Count(consoleRuntime(""), "\n") // the line the console member starts on
	for _, tc := range []struct{ name, member, client string }{
		{"a sender's client", "console.clientId", "case-system"},
		{"a client no profile names", "console.clientId", "nobody"},
	} {
		rt := b.mustLoad(t, consoleRuntime("console:\n  enabled: true\n  clientId: "+tc.client))
		ds := diagsOf(t, rt.CheckPackage(consolePackage()))
		if len(ds) != 1 || ds[0].Member != tc.member || ds[0].Line != lines+2 || ds[0].Code != CodeInvalid {
			t.Errorf("%s: diagnostics %v, want one at %s line %d", tc.name, ds, tc.member, lines+2)
		}
	}
	for _, tc := range []struct{ name, console, member string }{
		{"enabled without a client", "console: {enabled: true}", "console.clientId"},
		{"an unknown key", "console: {enabled: true, clientId: ops-console, theme: dark}", "console.theme"},
		{"enabled is not a boolean", "console: {enabled: maybe, clientId: ops-console}", "console.enabled"},
	} {
		_, err := b.load(t, consoleRuntime(tc.console))
		if d := requireDiag(t, err, CodeInvalid, tc.member); d.Line != lines {
			t.Errorf("%s: line %d, want %d", tc.name, d.Line, lines)
		}
	}
}
