package smtp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"switchboard/engine"
	smtp "switchboard/providers/smtp"
	"switchboard/providers/smtp/dkimkey"
	"switchboard/providers/smtp/smtpsink"
)

// TestDevSinkReceivesASignedEmail is the `switchboard dev` path: a DKIM key from Keygen, the
// sink in the dev mail folder, the provider with tls none towards it. One email ends accepted
// as exactly one .eml file whose signature verifies.
func TestDevSinkReceivesASignedEmail(t *testing.T) {
	t.Parallel()
	d, rec := dkimIdentity(t, dkimkey.RSA)
	mailDir := filepath.Join(t.TempDir(), ".switchboard", "dev", "mail")
	sink := smtpsink.New(mailDir, smtpsink.Options{LookupTXT: rec.Lookup()})
	addr, err := sink.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Close() })
	host, port := splitHostPort(t, addr)
	p, err := smtp.New(smtp.Config{ID: "mail-relay", Host: host, Port: port, TLS: smtp.TLSNone, DKIM: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	out := email("0190f5a0-0000-7000-8000-0000000000f1")
	out.Parts["subject"] = "Rappel : rendez-vous lundi"
	out.Parts["html"] = "<p>À lundi, Zoë.</p>"
	o := p.Send(context.Background(), out)
	wantOutcome(t, o, engine.OutcomeAccepted, "")

	files, err := filepath.Glob(filepath.Join(mailDir, "*.eml"))
	if err != nil || len(files) != 1 {
		t.Fatalf("%d .eml files (%v), want 1", len(files), err)
	}
	if st := sink.Stats(); st.Messages != 1 || st.DKIMPass != 1 || st.Duplicates != 0 {
		t.Fatalf("sink stats %+v, want one message whose DKIM passes", st)
	}
	if sink.Count(o.ProviderReference) != 1 {
		t.Fatalf("the sink does not know the provider reference %s", o.ProviderReference)
	}
	raw, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(raw), "Authentication-Results: "+smtpsink.DefaultDomain+"; dkim=pass header.d=example.org\r\n") {
		t.Fatalf("the stored mail does not record a passing DKIM check:\n%.300s", raw)
	}
	if v := verify(t, raw, rec); v.Err != nil {
		t.Fatalf("the stored .eml does not verify on its own: %v", v.Err)
	}
}
