package smtp_test

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"

	"switchboard/engine"
	"switchboard/engine/enginetest"
	smtp "switchboard/providers/smtp"
)

// sendOne sends out through a fresh relay and returns the outcome and the raw message read.
func sendOne(t *testing.T, cfg smtp.Config, out *engine.Outbound) (engine.Outcome, farMail) {
	t.Helper()
	f := newFar(t, farConfig{smtputf8: true})
	p := newProvider(t, f, cfg)
	o := p.Send(context.Background(), out)
	wantOutcome(t, o, engine.OutcomeAccepted, "")
	mails := f.got()
	if len(mails) != 1 {
		t.Fatalf("relay read %d messages, want 1", len(mails))
	}
	return o, mails[0]
}

// wantCRLF fails when raw holds a bare LF or a bare CR, or a line longer than SMTP allows.
func wantCRLF(t *testing.T, raw []byte) {
	t.Helper()
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if bytes.ContainsAny(line, "\r\n") {
			t.Fatalf("line %d holds a bare CR or LF: %q", i, line)
		}
		if len(line) > 998 {
			t.Fatalf("line %d is %d bytes long", i, len(line))
		}
	}
}

// readPart returns the decoded body and media type of a part.
func readPart(t *testing.T, p *mail.Part) (string, string) {
	t.Helper()
	b, err := io.ReadAll(p.Body)
	if err != nil {
		t.Fatal(err)
	}
	mt, params, err := p.Header.(*mail.InlineHeader).ContentType()
	if err != nil {
		t.Fatal(err)
	}
	if params["charset"] != "utf-8" {
		t.Fatalf("part %s charset %q, want utf-8", mt, params["charset"])
	}
	return string(b), mt
}

func TestPlainTextMessage(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC))
	out := email("0190f5a0-0000-7000-8000-0000000000aa")
	o, m := sendOne(t, smtp.Config{Clock: clock}, out)

	if m.from != "notices@example.org" || m.to != "pat@example.net" {
		t.Fatalf("envelope %s -> %s", m.from, m.to)
	}
	wantCRLF(t, m.raw)
	r, err := mail.CreateReader(bytes.NewReader(m.raw))
	if err != nil {
		t.Fatal(err)
	}
	h := r.Header
	if from, _ := h.AddressList("From"); len(from) != 1 || from[0].Address != "notices@example.org" {
		t.Fatalf("From %v", from)
	}
	if to, _ := h.AddressList("To"); len(to) != 1 || to[0].Address != "pat@example.net" {
		t.Fatalf("To %v", to)
	}
	if s, _ := h.Subject(); s != "Your appointment" {
		t.Fatalf("Subject %q", s)
	}
	if d, _ := h.Date(); !d.Equal(clock.Now()) {
		t.Fatalf("Date %v, want %v", d, clock.Now())
	}
	id, _ := h.MessageID()
	if id != "0190f5a0-0000-7000-8000-0000000000aa@example.org" {
		t.Fatalf("Message-ID %q: want the message id at the sender's domain", id)
	}
	if o.ProviderReference != "<"+id+">" {
		t.Fatalf("provider reference %q, want the Message-ID <%s>", o.ProviderReference, id)
	}
	if h.Get("MIME-Version") != "1.0" || h.Get("Content-Transfer-Encoding") != "7bit" {
		t.Fatalf("MIME-Version %q, Content-Transfer-Encoding %q", h.Get("MIME-Version"), h.Get("Content-Transfer-Encoding"))
	}
	p, err := r.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	body, mt := readPart(t, p)
	if mt != "text/plain" || body != "Hello Pat,\r\nsee you on Monday.\r\n" {
		t.Fatalf("part %s %q", mt, body)
	}
	if _, err := r.NextPart(); err != io.EOF {
		t.Fatalf("a plain text message has more than one part (%v)", err)
	}
}

func TestNonASCIISubjectAndBodyAreEncoded(t *testing.T) {
	t.Parallel()
	out := email("0190f5a0-0000-7000-8000-0000000000ab")
	subject := "Rendez-vous confirmé — 予約 ✓"
	text := "Bonjour Zoë,\nà lundi. Ünïcödé ≠ ASCII.\n" + strings.Repeat("long ", 300) + "\n"
	out.Parts["subject"], out.Parts["text"] = subject, text
	_, m := sendOne(t, smtp.Config{}, out)

	wantCRLF(t, m.raw)
	headerEnd := bytes.Index(m.raw, []byte("\r\n\r\n"))
	if headerEnd < 0 || !isASCIIBytes(m.raw[:headerEnd]) {
		t.Fatalf("the header is not plain ASCII")
	}
	if !bytes.Contains(m.raw[:headerEnd], []byte("=?utf-8?")) {
		t.Fatalf("the subject is not RFC 2047 encoded: %s", m.raw[:headerEnd])
	}
	if !isASCIIBytes(m.raw) {
		t.Fatalf("the body went out as 8bit; want quoted-printable")
	}
	r, err := mail.CreateReader(bytes.NewReader(m.raw))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Header.Subject(); s != subject {
		t.Fatalf("Subject decodes to %q", s)
	}
	if cte := r.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
		t.Fatalf("Content-Transfer-Encoding %q", cte)
	}
	p, err := r.NextPart()
	if err != nil {
		t.Fatal(err)
	}
	body, _ := readPart(t, p)
	if body != strings.ReplaceAll(text, "\n", "\r\n") {
		t.Fatalf("body decodes to %q", body)
	}
}

func TestHTMLMakesMultipartAlternative(t *testing.T) {
	t.Parallel()
	out := email("0190f5a0-0000-7000-8000-0000000000ac")
	out.Parts["html"] = "<p>Hello <b>Pat</b> — à lundi</p>\n"
	_, m := sendOne(t, smtp.Config{}, out)

	wantCRLF(t, m.raw)
	r, err := mail.CreateReader(bytes.NewReader(m.raw))
	if err != nil {
		t.Fatal(err)
	}
	if mt, _, _ := r.Header.ContentType(); mt != "multipart/alternative" {
		t.Fatalf("Content-Type %q, want multipart/alternative", mt)
	}
	var got []string
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, mt := readPart(t, p)
		got = append(got, mt+": "+body)
	}
	want := []string{
		"text/plain: Hello Pat,\r\nsee you on Monday.\r\n",
		"text/html: <p>Hello <b>Pat</b> — à lundi</p>\r\n",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("parts %q, want %q", got, want)
	}
}

func TestHeaderInjectionIsImpossible(t *testing.T) {
	t.Parallel()
	out := email("0190f5a0-0000-7000-8000-0000000000ad")
	out.Parts["subject"] = "Hi\r\nBcc: victim@example.com\nX-Evil: 1"
	_, m := sendOne(t, smtp.Config{}, out)
	r, err := mail.CreateReader(bytes.NewReader(m.raw))
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.Has("Bcc") || r.Header.Has("X-Evil") {
		t.Fatalf("a subject with line breaks added header fields:\n%s", m.raw)
	}
}

func TestMessageIDDomain(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		cfg    smtp.Config
		sender string
		want   string
	}{
		{"sender's domain", smtp.Config{}, "notices@example.org", "@example.org>"},
		{"configured domain", smtp.Config{MessageIDDomain: "mail.example.com"}, "notices@example.org", "@mail.example.com>"},
		{"display name sender", smtp.Config{}, "Notices <notices@example.org>", "@example.org>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := email("0190f5a0-0000-7000-8000-0000000000ae")
			out.SenderProfile.Sender = tc.sender
			o, _ := sendOne(t, tc.cfg, out)
			if !strings.HasPrefix(o.ProviderReference, "<0190f5a0-0000-7000-8000-0000000000ae@") || !strings.HasSuffix(o.ProviderReference, tc.want) {
				t.Fatalf("provider reference %q, want …%s", o.ProviderReference, tc.want)
			}
		})
	}
}

func TestUnbuildableMessageIsPermanent(t *testing.T) {
	t.Parallel()
	f := newFar(t, farConfig{})
	p := newProvider(t, f, smtp.Config{})
	for name, mutate := range map[string]func(*engine.Outbound){
		"recipient without @":   func(o *engine.Outbound) { o.Recipient = "pat" },
		"recipient with CRLF":   func(o *engine.Outbound) { o.Recipient = "pat@example.net\r\nRCPT TO:<x@y>" },
		"sender does not parse": func(o *engine.Outbound) { o.SenderProfile.Sender = "<<notices" },
		"message id with space": func(o *engine.Outbound) { o.MessageID = "a b" },
	} {
		out := email("0190f5a0-0000-7000-8000-0000000000af")
		mutate(out)
		o := p.Send(context.Background(), out)
		if o.Class != engine.OutcomePermanent || o.Code != smtp.CodeMessageInvalid {
			t.Errorf("%s: outcome %s %q (%s), want permanent %s", name, o.Class, o.Code, o.Reason, smtp.CodeMessageInvalid)
		}
	}
	if n := f.sessions.Load(); n != 0 {
		t.Fatalf("an unbuildable message opened %d connection(s)", n)
	}
}

func TestNonASCIIAddressNeedsSMTPUTF8(t *testing.T) {
	t.Parallel()
	out := email("0190f5a0-0000-7000-8000-0000000000b0")
	out.Recipient = "zoë@example.net"

	without := newFar(t, farConfig{})
	o := newProvider(t, without, smtp.Config{}).Send(context.Background(), out)
	wantOutcome(t, o, engine.OutcomePermanent, smtp.CodeSMTPUTF8Unavailable)
	if without.mailCmds.Load() != 0 {
		t.Fatalf("MAIL FROM was sent to a relay without SMTPUTF8")
	}

	_, m := sendOne(t, smtp.Config{}, out)
	if m.to != "zoë@example.net" {
		t.Fatalf("envelope recipient %q", m.to)
	}
}

var nonASCII = regexp.MustCompile(`[^\x00-\x7f]`)

func isASCIIBytes(b []byte) bool { return !nonASCII.Match(b) }
