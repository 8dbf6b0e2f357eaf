package smtpsink_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"switchboard/providers/smtp/dkimkey"
	"switchboard/providers/smtp/smtpsink"
)

// start runs a sink and closes it when the test ends.
func start(t *testing.T, dir string, opts smtpsink.Options) *smtpsink.Sink {
	t.Helper()
	s := smtpsink.New(dir, opts)
	if _, err := s.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func message(id, body string) string {
	return "From: a@example.org\r\nTo: b@example.net\r\nSubject: t\r\nMessage-ID: <" + id + ">\r\n\r\n" + body + "\r\n"
}

// send delivers msgs over one connection, as the provider does.
func send(t *testing.T, addr string, auth sasl.Client, msgs ...string) error {
	t.Helper()
	c, err := gosmtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if auth != nil {
		if err := c.Auth(auth); err != nil {
			return err
		}
	}
	for _, m := range msgs {
		if err := c.SendMail("a@example.org", []string{"b@example.net"}, strings.NewReader(m)); err != nil {
			return err
		}
	}
	return c.Quit()
}

func TestSinkStoresEachMessageAsEML(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mail")
	var mu sync.Mutex
	var seen []smtpsink.Mail
	s := start(t, dir, smtpsink.Options{OnMessage: func(m smtpsink.Mail) {
		mu.Lock()
		seen = append(seen, m)
		mu.Unlock()
	}})
	if err := send(t, s.Addr(), nil, message("one@x", "first"), message("two@x", ".leading dot\r\nsecond")); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.eml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Fatalf("%d .eml files, want 2", len(files))
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("mail folder: %v, mode %v", err, info.Mode().Perm())
	}
	b, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != message("two@x", ".leading dot\r\nsecond") {
		t.Fatalf("second file holds %q", b)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".incoming-*")); len(leftovers) != 0 {
		t.Fatalf("temporary files left: %v", leftovers)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0].MessageID != "one@x" || seen[0].Path != files[0] || seen[0].From != "a@example.org" ||
		len(seen[0].To) != 1 || seen[0].To[0] != "b@example.net" || seen[0].DKIM != smtpsink.DKIMNone {
		t.Fatalf("OnMessage saw %+v", seen)
	}
}

func TestSinkCountsDuplicates(t *testing.T) {
	t.Parallel()
	s := start(t, "", smtpsink.Options{})
	if err := send(t, s.Addr(), nil, message("a@x", "1"), message("b@x", "2"), message("a@x", "1 again"), message("a@x", "1 thrice")); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Messages != 4 || st.Unique != 2 || st.Duplicates != 1 {
		t.Fatalf("stats %+v, want 4 messages, 2 unique, 1 duplicated id", st)
	}
	if s.Count("<a@x>") != 3 || s.Count("b@x") != 1 || s.Count("c@x") != 0 {
		t.Fatalf("counts a=%d b=%d c=%d", s.Count("<a@x>"), s.Count("b@x"), s.Count("c@x"))
	}
	if s.Dir() != "" {
		t.Fatalf("a counting sink has a folder")
	}
}

func TestSinkVerifiesDKIM(t *testing.T) {
	t.Parallel()
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := dkimkey.NewRecord("example.org", "s1", key.Public())
	if err != nil {
		t.Fatal(err)
	}
	sign := func(m string) string {
		var b bytes.Buffer
		if err := dkim.Sign(&b, strings.NewReader(m), &dkim.SignOptions{Domain: "example.org", Selector: "s1", Signer: key}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	dir := t.TempDir()
	s := start(t, dir, smtpsink.Options{LookupTXT: rec.Lookup()})
	good := sign(message("good@x", "signed"))
	bad := strings.Replace(sign(message("bad@x", "signed")), "signed\r\n", "changed\r\n", 1)
	if err := send(t, s.Addr(), nil, good, bad, message("none@x", "unsigned")); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.DKIMPass != 1 || st.DKIMFail != 1 {
		t.Fatalf("stats %+v, want one pass and one fail", st)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.eml"))
	want := []string{"dkim=pass header.d=example.org", "dkim=fail header.d=example.org", "dkim=none"}
	if len(files) != len(want) {
		t.Fatalf("%d files", len(files))
	}
	for i, f := range files {
		b, _ := os.ReadFile(f)
		first := strings.SplitN(string(b), "\r\n", 2)[0]
		if first != "Authentication-Results: "+smtpsink.DefaultDomain+"; "+want[i] {
			t.Fatalf("file %d starts %q, want %q", i, first, want[i])
		}
	}
	// The added header does not break the stored signature.
	b, _ := os.ReadFile(files[0])
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(b), &dkim.VerifyOptions{LookupTXT: rec.Lookup()})
	if err != nil || len(vs) != 1 || vs[0].Err != nil {
		t.Fatalf("the stored signed message does not verify: %v %+v", err, vs)
	}
}

func TestSinkRequiresAuthWhenConfigured(t *testing.T) {
	t.Parallel()
	s := start(t, "", smtpsink.Options{Username: "dev", Password: "pw"})
	var se *gosmtp.SMTPError
	if err := send(t, s.Addr(), nil, message("x@x", "no auth")); !errors.As(err, &se) || se.Code != 502 {
		t.Fatalf("MAIL without AUTH: %v, want 502", err)
	}
	if err := send(t, s.Addr(), sasl.NewPlainClient("", "dev", "wrong"), message("x@x", "bad auth")); !errors.As(err, &se) || se.Code != 535 {
		t.Fatalf("wrong password: %v, want 535", err)
	}
	if err := send(t, s.Addr(), sasl.NewPlainClient("", "dev", "pw"), message("x@x", "good auth")); err != nil {
		t.Fatalf("right password: %v", err)
	}
	if st := s.Stats(); st.Messages != 1 || st.AuthFailures != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestSinkRefusesOversizedMessages(t *testing.T) {
	t.Parallel()
	s := start(t, t.TempDir(), smtpsink.Options{MaxMessageBytes: 1024})
	var se *gosmtp.SMTPError
	if err := send(t, s.Addr(), nil, message("big@x", strings.Repeat("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n", 64))); !errors.As(err, &se) || se.Code != 552 {
		t.Fatalf("oversized message: %v, want 552", err)
	}
	if st := s.Stats(); st.Messages != 0 {
		t.Fatalf("an oversized message was counted")
	}
}

func TestSinkCloseIsIdempotentAndFinal(t *testing.T) {
	t.Parallel()
	fixed := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	s := smtpsink.New(dir, smtpsink.Options{Now: func() time.Time { return fixed }})
	addr, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := send(t, addr, nil, message("x@x", "before close")); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "20260302T090000.000000000Z-*.eml")); len(files) != 1 {
		t.Fatalf("files named by the sink's clock: %v", files)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := gosmtp.Dial(addr); err == nil {
		t.Fatalf("the sink still listens after Close")
	}
	if _, err := s.Start("127.0.0.1:0"); err == nil {
		t.Fatalf("a closed sink started again")
	}
}
