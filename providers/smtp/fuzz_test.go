package smtp

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message/mail"

	"switchboard/engine"
)

// FuzzCompose feeds rendered parts (template output, which carries caller data) to the MIME
// builder: whatever they hold, the message has CRLF line endings and lines SMTP can carry, its
// header holds exactly the fields the provider wrote, and the parts decode back to what was
// rendered.
//
//	go test -run '^$' -fuzz FuzzCompose -fuzztime 30s ./providers/smtp/
func FuzzCompose(f *testing.F) {
	f.Add("Hello", "Plain text.\n", "")
	f.Add("Rendez-vous confirmé ✓", "Zoë\r\nà lundi\r", "<p>À lundi</p>")
	f.Add("Hi\r\nBcc: x@example.com", ".\n.leading dot\n", "<p>\n.\n</p>")
	f.Add(strings.Repeat("long subject ", 40), strings.Repeat("x", 3000), strings.Repeat("é", 2000))
	f.Add(strings.Repeat("x", 3000), "", "")
	f.Add("=?utf-8?q?already_encoded?=", "tab\there\x00nul\x1bescape", "")
	s, err := Config{Host: "127.0.0.1", Port: 2525, TLS: TLSNone}.normalized()
	if err != nil {
		f.Fatal(err)
	}
	date := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, subject, text, html string) {
		out := &engine.Outbound{
			MessageID: "0190f5a0-0000-7000-8000-000000000001", Recipient: "pat@example.net",
			Parts:         map[string]string{PartSubject: subject, PartText: text, PartHTML: html},
			SenderProfile: engine.SenderProfileView{Sender: "notices@example.org"},
		}
		env, err := s.compose(out, date)
		if err != nil {
			t.Fatalf("compose: %v", err)
		}
		for _, line := range bytes.Split(env.data, []byte("\r\n")) {
			if bytes.ContainsAny(line, "\r\n") || len(line) > maxLineBytes {
				t.Fatalf("line %q: bare CR/LF or longer than %d", line, maxLineBytes)
			}
		}
		r, err := mail.CreateReader(bytes.NewReader(env.data))
		if err != nil {
			t.Fatalf("the message does not parse: %v", err)
		}
		fields := r.Header.Fields()
		for fields.Next() {
			switch strings.ToLower(fields.Key()) {
			case "date", "from", "to", "subject", "message-id", "mime-version", "content-type", "content-transfer-encoding":
			default:
				t.Fatalf("unexpected header field %q", fields.Key())
			}
		}
		if utf8.ValidString(subject) {
			if got, err := r.Header.Subject(); err != nil || got != subjectText(subject) {
				t.Fatalf("subject decodes to %q (%v), want %q", got, err, subjectText(subject))
			}
		}
		want := []string{}
		if normalizeNewlines(text) != "" || html == "" {
			want = append(want, crlf(text))
		}
		if html != "" {
			want = append(want, crlf(html))
		}
		var got []string
		for {
			p, err := r.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("part: %v", err)
			}
			b, err := io.ReadAll(p.Body)
			if err != nil {
				t.Fatalf("part body: %v", err)
			}
			got = append(got, string(b))
		}
		if len(got) != len(want) {
			t.Fatalf("%d parts, want %d", len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("part %d decodes to %q, want %q", i, got[i], want[i])
			}
		}
	})
}

// crlf is the body a reader gets back for a rendered part: newlines as CRLF.
func crlf(s string) string { return strings.ReplaceAll(normalizeNewlines(s), "\n", "\r\n") }
