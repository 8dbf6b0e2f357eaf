package smtp

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/emersion/go-message/mail"

	"switchboard/engine"
)

// Rendered part names of an email (docs/package.md, "Templates").
const (
	PartSubject = "subject"
	PartText    = "text"
	PartHTML    = "html"
)

// maxLineBytes is the longest line SMTP carries (RFC 5321 section 4.5.3.1.6, without CRLF).
const maxLineBytes = 998

// subjectLine keeps a subject on one line (packages already drop newlines; this is the
// provider's own guarantee against header injection).
var subjectLine = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ")

// maxEncodedWordBytes is how many bytes of text one base64 encoded-word carries: 45 bytes make
// 60 characters of base64, and with "=?utf-8?b?" and "?=" the word stays within RFC 2047's 75.
const maxEncodedWordBytes = 45

// maxFoldableWord is the longest run without white space that header folding never needs to
// cut ("Subject: " plus the run stays within the 78 characters RFC 5322 recommends).
const maxFoldableWord = 68

// longestWord is the length in bytes of the longest run of s without a space or a tab.
func longestWord(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}

// subjectText is the subject as the message carries it: on one line, without the surrounding
// white space a header would lose anyway.
func subjectText(s string) string {
	return strings.TrimSpace(subjectLine.Replace(s))
}

// encodeSubject is the Subject field value: the text itself when it is plain ASCII, else RFC 2047
// encoded-words. Two kinds of ASCII text are encoded too: text containing "=?" (a reader would
// decode what merely looks like an encoded-word) and text with a run longer than a header line
// holds (folding would have to cut it, and the reader would see a space there).
func encodeSubject(s string) string {
	if !strings.Contains(s, "=?") && longestWord(s) <= maxFoldableWord {
		return mime.QEncoding.Encode("utf-8", s)
	}
	var words []string
	for s != "" {
		n := min(len(s), maxEncodedWordBytes)
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n-- // never split a character between two words
		}
		if n == 0 {
			n = min(len(s), maxEncodedWordBytes)
		}
		words = append(words, "=?utf-8?b?"+base64.StdEncoding.EncodeToString([]byte(s[:n]))+"?=")
		s = s[n:]
	}
	return strings.Join(words, " ")
}

// errInvalidMessage marks a message that can never be sent as it is (a permanent outcome).
var errInvalidMessage = errors.New("invalid message")

// envelope is one built message: the SMTP envelope and the bytes handed to DATA.
type envelope struct {
	from, to  string // envelope addresses, without angle brackets
	utf8      bool   // an address is not ASCII: SMTPUTF8 is required
	messageID string // the Message-ID header value, with angle brackets: the provider reference
	signature []byte // the DKIM-Signature header field with its CRLF, sent first; nil unsigned
	data      []byte // the message with CRLF line endings
}

// MessageID derives the Message-ID of a message (the provider reference) from its id and a
// domain: "<ID@DOMAIN>". It is the same for every attempt of a message, so that a relay or
// mailbox that sees a maybe-sent message twice can tell it is one message.
func MessageID(messageID, domain string) string {
	return "<" + messageID + "@" + domain + ">"
}

// compose builds the message of out. It fails with errInvalidMessage when an address does not
// parse or a header value would need a line break.
func (s *settings) compose(out *engine.Outbound, date time.Time) (*envelope, error) {
	from, err := parseAddress("sender", out.SenderProfile.Sender)
	if err != nil {
		return nil, err
	}
	to, err := parseAddress("recipient", out.Recipient)
	if err != nil {
		return nil, err
	}
	if out.MessageID == "" || !isMessageIDText(out.MessageID) {
		return nil, fmt.Errorf("message id %q cannot form a Message-ID: %w", out.MessageID, errInvalidMessage)
	}
	domain := s.MessageIDDomain
	if domain == "" && s.DKIM != nil {
		domain = s.DKIM.Domain
	}
	if domain == "" {
		if at := strings.LastIndexByte(from.Address, '@'); at >= 0 && isMessageIDText(from.Address[at+1:]) {
			domain = from.Address[at+1:]
		}
	}
	if domain == "" {
		domain = DefaultMessageIDDomain
	}
	env := &envelope{
		from: from.Address, to: to.Address,
		utf8:      !isASCII(from.Address) || !isASCII(to.Address),
		messageID: MessageID(out.MessageID, domain),
	}

	var h mail.Header
	h.SetDate(date)
	h.SetAddressList("From", []*mail.Address{from})
	h.SetAddressList("To", []*mail.Address{to})
	h.Set("Subject", encodeSubject(subjectText(out.Parts[PartSubject])))
	h.Set("Message-ID", env.messageID)

	var buf bytes.Buffer
	buf.Grow(1024 + len(out.Parts[PartText]) + len(out.Parts[PartHTML]))
	text, html := normalizeNewlines(out.Parts[PartText]), normalizeNewlines(out.Parts[PartHTML])
	switch {
	case html == "":
		err = writeSingle(&buf, h, "text/plain", text)
	case text == "":
		err = writeSingle(&buf, h, "text/html", html)
	default:
		err = writeAlternative(&buf, h, text, html)
	}
	if err != nil {
		return nil, fmt.Errorf("build the MIME message: %w", err)
	}
	env.data = buf.Bytes()
	return env, nil
}

// writeSingle writes a message with one text part as its body.
func writeSingle(buf *bytes.Buffer, h mail.Header, mediaType, body string) error {
	h.SetContentType(mediaType, map[string]string{"charset": "utf-8"})
	h.Set("Content-Transfer-Encoding", transferEncoding(body))
	w, err := mail.CreateSingleInlineWriter(buf, h)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(body)); err != nil {
		return err
	}
	return w.Close()
}

// writeAlternative writes multipart/alternative with the text part first and the html part
// last, as RFC 2046 section 5.1.4 orders them (least to most faithful).
func writeAlternative(buf *bytes.Buffer, h mail.Header, text, html string) error {
	mw, err := mail.CreateInlineWriter(buf, h)
	if err != nil {
		return err
	}
	for _, p := range []struct{ mediaType, body string }{{"text/plain", text}, {"text/html", html}} {
		var ph mail.InlineHeader
		ph.SetContentType(p.mediaType, map[string]string{"charset": "utf-8"})
		ph.Set("Content-Transfer-Encoding", transferEncoding(p.body))
		w, err := mw.CreatePart(ph)
		if err != nil {
			return err
		}
		if _, err := w.Write([]byte(p.body)); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return mw.Close()
}

// transferEncoding is 7bit for a body of printable ASCII (tabs and newlines allowed) whose lines
// fit SMTP, and quoted-printable for anything else: UTF-8 text, control characters, long lines.
func transferEncoding(body string) string {
	line := 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\n':
			line = 0
			continue
		case c >= 0x80, c < 0x20 && c != '\t', c == 0x7f:
			return "quoted-printable"
		}
		if line++; line > maxLineBytes {
			return "quoted-printable"
		}
	}
	return "7bit"
}

// normalizeNewlines turns CRLF and lone CR into LF; the MIME writers then emit CRLF.
func normalizeNewlines(s string) string {
	if !strings.ContainsRune(s, '\r') {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// parseAddress reads one address ("a@example.org" or "Name <a@example.org>").
func parseAddress(what, s string) (*mail.Address, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, fmt.Errorf("%s address holds a line break: %w", what, errInvalidMessage)
	}
	a, err := mail.ParseAddress(s)
	if err != nil || !strings.Contains(a.Address, "@") || !utf8.ValidString(a.Address) {
		return nil, fmt.Errorf("%s address does not parse: %w", what, errInvalidMessage)
	}
	return a, nil
}

// isMessageIDText reports whether s may stand on one side of a Message-ID's "@": printable
// ASCII without white space, angle brackets or "@" (RFC 5322 section 3.6.4, loosely).
func isMessageIDText(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == '@' || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
