package smtp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// errStartTLSUnavailable: the relay did not offer STARTTLS; the provider never goes on in
// plain text.
var errStartTLSUnavailable = errors.New("the relay does not offer STARTTLS")

// errAuthUnavailable: credentials are configured but the relay offers neither AUTH PLAIN nor
// AUTH LOGIN.
var errAuthUnavailable = errors.New("the relay offers neither AUTH PLAIN nor AUTH LOGIN")

// trackedConn is the TCP connection under the SMTP client (under TLS, when TLS is used). It
// remembers whether a write ever failed: a failed write means its last bytes did not leave, so
// when it carried the end of the DATA body the relay cannot have taken the message.
type trackedConn struct {
	net.Conn
	writeFailed atomic.Bool
}

// Write implements net.Conn.
func (c *trackedConn) Write(b []byte) (int, error) {
	n, err := c.Conn.Write(b)
	if err != nil {
		c.writeFailed.Store(true)
	}
	return n, err
}

// relayConn is one connection to the relay, ready for MAIL FROM.
type relayConn struct {
	client   *gosmtp.Client
	raw      *trackedConn
	sent     int       // messages carried so far
	lastUsed time.Time // when it went back to the pool
	utf8     bool      // the relay offers SMTPUTF8
}

// close drops the connection without a word to the relay.
func (c *relayConn) close() { _ = c.client.Close() }

// quit says goodbye (QUIT) within d, then closes.
func (c *relayConn) quit(d time.Duration) {
	c.client.CommandTimeout = d
	if err := c.client.Quit(); err != nil {
		c.close()
	}
}

// armTimeouts bounds every read and write of the next exchange by ctx's deadline (go-smtp sets
// the connection deadline from these before each command and before the final reply).
func (c *relayConn) armTimeouts(ctx context.Context) {
	d := time.Minute
	if dl, ok := ctx.Deadline(); ok {
		d = max(time.Until(dl), time.Millisecond)
	}
	c.client.CommandTimeout, c.client.SubmissionTimeout = d, d
}

// dial opens a new connection: TCP, TLS as configured, EHLO and AUTH. ctx bounds all of it:
// when ctx ends, the connection is closed under whatever step is waiting. Errors are
// *stepError (step connect, tls or auth) so that classify can tell them apart.
func (s *settings) dial(ctx context.Context) (*relayConn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, &stepError{step: stepConnect, err: err}
	}
	raw := &trackedConn{Conn: nc}
	stop := context.AfterFunc(ctx, func() { _ = raw.Close() })
	defer stop()

	var client *gosmtp.Client
	switch s.TLS {
	case TLSImplicit:
		client = gosmtp.NewClient(tls.Client(raw, s.tlsConfig))
	case TLSStartTLS:
		client, err = gosmtp.NewClientStartTLS(raw, s.tlsConfig)
		if err != nil {
			_ = raw.Close()
			return nil, startTLSError(err)
		}
	default:
		client = gosmtp.NewClient(raw)
	}
	c := &relayConn{client: client, raw: raw}
	c.armTimeouts(ctx)
	// The first command after TLS runs the handshake: a certificate the trusted roots do not
	// vouch for fails here, before any credential or address is written.
	if err := client.Hello(s.LocalName); err != nil {
		c.close()
		if isTLSError(err) {
			return nil, &stepError{step: stepTLS, err: err}
		}
		return nil, &stepError{step: stepConnect, err: err}
	}
	if s.TLS != TLSNone {
		if _, ok := client.TLSConnectionState(); !ok {
			c.close()
			return nil, &stepError{step: stepTLS, err: errors.New("the connection is not encrypted")}
		}
	}
	c.utf8, _ = client.Extension("SMTPUTF8")
	if s.Username != "" {
		if err := s.authenticate(client); err != nil {
			c.close()
			return nil, &stepError{step: stepAuth, err: err}
		}
	}
	return c, nil
}

// startTLSError classifies what NewClientStartTLS returned: a reply of the relay (to EHLO or
// STARTTLS), a broken connection, or (neither) the missing STARTTLS extension.
func startTLSError(err error) error {
	var se *gosmtp.SMTPError
	var ne net.Error
	switch {
	case errors.As(err, &se):
		return &stepError{step: stepTLS, err: err}
	case errors.As(err, &ne), errors.Is(err, net.ErrClosed), isTLSError(err), isEOF(err):
		return &stepError{step: stepConnect, err: err}
	case strings.Contains(err.Error(), "STARTTLS"):
		return &stepError{step: stepTLS, err: fmt.Errorf("%w (%v)", errStartTLSUnavailable, err)}
	}
	return &stepError{step: stepConnect, err: err}
}

// authenticate runs AUTH PLAIN, or AUTH LOGIN when the relay offers only that.
func (s *settings) authenticate(c *gosmtp.Client) error {
	var mech sasl.Client
	switch {
	case c.SupportsAuth(sasl.Plain):
		mech = sasl.NewPlainClient("", s.Username, s.Password)
	case c.SupportsAuth(sasl.Login):
		mech = sasl.NewLoginClient(s.Username, s.Password)
	default:
		return errAuthUnavailable
	}
	if err := c.Auth(mech); err != nil {
		return fmt.Errorf("AUTH: %w", err)
	}
	return nil
}

// isTLSError reports whether err comes from the TLS layer: a certificate not vouched for, a
// handshake alert, a peer that does not speak TLS.
func isTLSError(err error) bool {
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	var ae tls.AlertError
	// Remote alerts ("remote error: tls: …") have no exported type; their text is stable.
	return errors.As(err, &cv) || errors.As(err, &rh) || errors.As(err, &ae) ||
		strings.Contains(err.Error(), "tls: ")
}
