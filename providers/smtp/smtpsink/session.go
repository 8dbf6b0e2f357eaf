package smtpsink

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/mail"

	"github.com/emersion/go-msgauth/dkim"
	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// errClosing refuses a message that arrives while the sink is closing.
var errClosing = &gosmtp.SMTPError{Code: 421, EnhancedCode: gosmtp.EnhancedCode{4, 3, 2}, Message: "The sink is closing"}

// session is one SMTP connection's state.
type session struct {
	sink   *Sink
	authed bool
	from   string
	to     []string
}

func (s *Sink) newSession(*gosmtp.Conn) (gosmtp.Session, error) {
	return &session{sink: s}, nil
}

// AuthMechanisms offers PLAIN when credentials are configured, nothing otherwise.
func (ss *session) AuthMechanisms() []string {
	if ss.sink.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

// Auth checks PLAIN credentials against Options.Username and Password.
func (ss *session) Auth(mech string) (sasl.Server, error) {
	if ss.sink.opts.Username == "" || mech != sasl.Plain {
		return nil, gosmtp.ErrAuthUnknownMechanism
	}
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if (identity != "" && identity != username) || username != ss.sink.opts.Username || password != ss.sink.opts.Password {
			ss.sink.mu.Lock()
			ss.sink.stats.AuthFailures++
			ss.sink.mu.Unlock()
			return gosmtp.ErrAuthFailed
		}
		ss.authed = true
		return nil
	}), nil
}

// Mail starts a transaction; with credentials configured, only after AUTH.
func (ss *session) Mail(from string, _ *gosmtp.MailOptions) error {
	if ss.sink.opts.Username != "" && !ss.authed {
		return gosmtp.ErrAuthRequired
	}
	ss.from, ss.to = from, nil
	return nil
}

// Rcpt adds a recipient.
func (ss *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	ss.to = append(ss.to, to)
	return nil
}

// Data reads the message, verifies its DKIM signatures when configured, stores and counts it.
func (ss *session) Data(r io.Reader) error {
	s := ss.sink
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosing
	}
	s.inflight.Add(1)
	s.mu.Unlock()
	defer s.inflight.Done()

	raw, err := io.ReadAll(r)
	if err != nil {
		return err // go-smtp answers ErrDataTooLarge with 552 itself
	}
	m := Mail{From: ss.from, To: append([]string(nil), ss.to...), DKIM: DKIMNone, Size: len(raw)}
	if msg, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil {
		m.MessageID = normalizeID(msg.Header.Get("Message-Id"))
	}
	stored := raw
	if s.opts.LookupTXT != nil {
		var domain string
		m.DKIM, domain = verifyDKIM(raw, s.opts.LookupTXT)
		stored = append([]byte(authResults(s.opts.Domain, m.DKIM, domain)), raw...)
	}
	if s.dir != "" {
		if m.Path, err = s.store(stored); err != nil {
			s.log.Error("smtp sink: cannot store a message", "error", err)
			return &gosmtp.SMTPError{Code: 451, EnhancedCode: gosmtp.EnhancedCode{4, 3, 0}, Message: "Cannot store the message"}
		}
	}
	s.record(m)
	return nil
}

// Reset ends the transaction.
func (ss *session) Reset() { ss.from, ss.to = "", nil }

// Logout ends the session.
func (ss *session) Logout() error { return nil }

// verifyDKIM checks every signature of raw: pass when one verifies, fail when none does, none
// without signatures. domain is the d= of the first passing (else first) signature.
func verifyDKIM(raw []byte, lookup func(string) ([]string, error)) (result, domain string) {
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(raw), &dkim.VerifyOptions{LookupTXT: lookup, MaxVerifications: 5})
	if err != nil && !errors.Is(err, dkim.ErrTooManySignatures) {
		return DKIMFail, ""
	}
	if len(vs) == 0 {
		return DKIMNone, ""
	}
	for _, v := range vs {
		if v.Err == nil {
			return DKIMPass, v.Domain
		}
	}
	return DKIMFail, vs[0].Domain
}

// authResults is the Authentication-Results header field (RFC 8601) the sink adds on top.
func authResults(authServ, result, domain string) string {
	if domain == "" {
		return fmt.Sprintf("Authentication-Results: %s; dkim=%s\r\n", authServ, result)
	}
	return fmt.Sprintf("Authentication-Results: %s; dkim=%s header.d=%s\r\n", authServ, result, domain)
}

var _ gosmtp.AuthSession = (*session)(nil)
