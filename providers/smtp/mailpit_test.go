package smtp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"go/build"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
	smtp "switchboard/providers/smtp"
	"switchboard/providers/smtp/dkimkey"
)

// mailpitBinary finds mailpit on PATH or in $(go env GOPATH)/bin; "" when absent.
func mailpitBinary() string {
	if p, err := exec.LookPath("mailpit"); err == nil {
		return p
	}
	gopath := build.Default.GOPATH
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil && strings.TrimSpace(string(out)) != "" {
		gopath = strings.TrimSpace(string(out))
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", "mailpit")
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			return p
		}
	}
	return ""
}

// freePort returns a loopback port nothing listens on at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startMailpit runs mailpit on free loopback ports and returns its SMTP port and API base URL
// once both listeners answer. The process is killed when the test ends.
func startMailpit(t *testing.T, bin string) (int, string) {
	t.Helper()
	smtpPort, httpPort := freePort(t), freePort(t)
	api := fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	cmd := exec.Command(bin,
		"--smtp", fmt.Sprintf("127.0.0.1:%d", smtpPort),
		"--listen", fmt.Sprintf("127.0.0.1:%d", httpPort),
		"--database", filepath.Join(t.TempDir(), "mailpit.db"),
		"--disable-version-check")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatalf("start mailpit: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// Mailpit logs each listener as it starts; wait for the last one, then for the API to answer
	// (the log line comes just before the listener binds).
	started := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var log strings.Builder
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(sc.Text(), "[http] accessible via") {
				started <- ""
				_, _ = io.Copy(io.Discard, out)
				return
			}
		}
		started <- log.String()
	}()
	select {
	case log := <-started:
		if log != "" {
			t.Fatalf("mailpit exited before listening:\n%s", log)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("mailpit did not start within 30 s")
	}
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		resp, err := http.Get(api + "/api/v1/info")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return smtpPort, api
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit API did not answer: %v", err)
		}
		<-tick.C
	}
}

// mailpitMessage is the part of Mailpit's message summary the test reads.
type mailpitMessage struct {
	ID        string
	MessageID string
	Subject   string
	From      struct{ Address string }
	To        []struct{ Address string }
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestMailpitDelivery sends a real, signed message to Mailpit and reads it back through
// Mailpit's API. CI installs mailpit (go install github.com/axllent/mailpit@v1.33.1).
func TestMailpitDelivery(t *testing.T) {
	t.Parallel()
	bin := mailpitBinary()
	if bin == "" {
		t.Skip("needs mailpit on PATH or in $(go env GOPATH)/bin: go install github.com/axllent/mailpit@v1.33.1 (.ci/run installs it)")
	}
	smtpPort, api := startMailpit(t, bin)
	d, rec := dkimIdentity(t, dkimkey.Ed25519)
	p, err := smtp.New(smtp.Config{ID: "mailpit", Host: "127.0.0.1", Port: smtpPort, TLS: smtp.TLSNone, DKIM: d})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })

	subject := "Rendez-vous confirmé ✓"
	var refs []string
	for i := range 2 {
		out := email(fmt.Sprintf("0190f5a0-0000-7000-8000-00000000f00%d", i))
		out.Parts["subject"] = subject
		out.Parts["html"] = "<p>À lundi</p>"
		o := p.Send(context.Background(), out)
		wantOutcome(t, o, engine.OutcomeAccepted, "")
		refs = append(refs, o.ProviderReference)
	}

	var list struct {
		Total    int
		Messages []mailpitMessage
	}
	getJSON(t, api+"/api/v1/messages", &list)
	if list.Total != 2 || len(list.Messages) != 2 {
		t.Fatalf("Mailpit holds %d messages, want 2", list.Total)
	}
	for _, m := range list.Messages {
		if m.Subject != subject || m.From.Address != "notices@example.org" || len(m.To) != 1 || m.To[0].Address != "pat@example.net" {
			t.Fatalf("Mailpit read %+v", m)
		}
		if "<"+m.MessageID+">" != refs[0] && "<"+m.MessageID+">" != refs[1] {
			t.Fatalf("Mailpit Message-ID %q is not a provider reference %v", m.MessageID, refs)
		}
		resp, err := http.Get(api + "/api/v1/message/" + m.ID + "/raw")
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if v := verify(t, raw, rec); v.Err != nil {
			t.Fatalf("the message as Mailpit stored it does not verify: %v", v.Err)
		}
	}
}
