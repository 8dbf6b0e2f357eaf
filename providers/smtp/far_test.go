package smtp_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// farConfig scripts the in-process relay a test talks to.
type farConfig struct {
	startTLS *tls.Config // offer STARTTLS with this certificate
	implicit *tls.Config // speak TLS from the first byte
	// username and password require AUTH before MAIL; loginOnly offers LOGIN instead of PLAIN.
	username, password string
	loginOnly          bool
	smtputf8           bool
	// replies refuse the step with this error (an *gosmtp.SMTPError).
	mailErr, rcptErr, dataErr error
	// refuseRcpt is answered 550 at RCPT TO; other recipients are taken.
	refuseRcpt string
	// cutAfter, when positive, makes the relay read that many bytes of the body and then break
	// the connection (the body is still being written).
	cutAfter int
	// onData runs after the whole message was read; its error is the final reply. nil accepts.
	onData func(f *far, c *gosmtp.Conn, raw []byte) error
}

// farMail is one message the relay read.
type farMail struct {
	from, to string
	raw      []byte
	tls      bool
	user     string
}

// far is an in-process go-smtp relay on loopback.
type far struct {
	addr     string
	cfg      farConfig
	released chan struct{} // closed at cleanup: lets stalled sessions go

	// sessions counts connections (go-smtp starts a second session on one connection after
	// STARTTLS; it is counted once).
	sessions, mailCmds, received, logouts atomic.Int32
	inData, maxInData                     atomic.Int32

	mu    sync.Mutex
	wire  bytes.Buffer // what the clients said, line by line (go-smtp's debug log)
	mails []farMail
	conns map[*gosmtp.Conn]bool // open connections
	ever  map[*gosmtp.Conn]bool // every connection seen
}

// newFar starts a relay with cfg and stops it when the test ends.
func newFar(t testing.TB, cfg farConfig) *far {
	t.Helper()
	f := &far{cfg: cfg, released: make(chan struct{}), conns: map[*gosmtp.Conn]bool{}, ever: map[*gosmtp.Conn]bool{}}
	srv := gosmtp.NewServer(gosmtp.BackendFunc(func(c *gosmtp.Conn) (gosmtp.Session, error) {
		f.mu.Lock()
		f.conns[c] = true
		if !f.ever[c] {
			f.ever[c] = true
			f.sessions.Add(1)
		}
		f.mu.Unlock()
		return &farSession{f: f, c: c}, nil
	}))
	srv.Domain = "far.test"
	srv.AllowInsecureAuth = true
	srv.TLSConfig = cfg.startTLS
	srv.EnableSMTPUTF8 = cfg.smtputf8
	srv.ErrorLog = nopLogger{}
	srv.Debug = wireLog{f}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.implicit != nil {
		ln = tls.NewListener(ln, cfg.implicit)
	}
	f.addr = ln.Addr().String()
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	t.Cleanup(func() { close(f.released) }) // LIFO: release stalled sessions first
	return f
}

// port is the relay's port.
func (f *far) port() int {
	_, p, _ := net.SplitHostPort(f.addr)
	n, _ := strconv.Atoi(p)
	return n
}

// wireLog records the conversation under f.mu.
type wireLog struct{ f *far }

func (w wireLog) Write(b []byte) (int, error) {
	w.f.mu.Lock()
	defer w.f.mu.Unlock()
	return w.f.wire.Write(b)
}

// said returns what the relay's clients said so far.
func (f *far) said() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wire.String()
}

// got returns the messages read so far.
func (f *far) got() []farMail {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]farMail(nil), f.mails...)
}

// dropAll closes every connection the relay holds, as a relay does to idle clients.
func (f *far) dropAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.conns {
		_ = c.Conn().Close()
	}
}

type farSession struct {
	f      *far
	c      *gosmtp.Conn
	user   string
	from   string
	to     string
	authed bool
}

func (s *farSession) AuthMechanisms() []string {
	switch {
	case s.f.cfg.username == "":
		return nil
	case s.f.cfg.loginOnly:
		return []string{sasl.Login}
	}
	return []string{sasl.Plain}
}

func (s *farSession) Auth(mech string) (sasl.Server, error) {
	check := func(user, pass string) error {
		if user != s.f.cfg.username || pass != s.f.cfg.password {
			return gosmtp.ErrAuthFailed
		}
		s.user, s.authed = user, true
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, pass string) error { return check(user, pass) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, gosmtp.ErrAuthUnknownMechanism
}

func (s *farSession) Mail(from string, _ *gosmtp.MailOptions) error {
	s.f.mailCmds.Add(1)
	if s.f.cfg.username != "" && !s.authed {
		return gosmtp.ErrAuthRequired
	}
	if s.f.cfg.mailErr != nil {
		return s.f.cfg.mailErr
	}
	s.from = from
	return nil
}

func (s *farSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if s.f.cfg.rcptErr != nil {
		return s.f.cfg.rcptErr
	}
	if to == s.f.cfg.refuseRcpt {
		return &gosmtp.SMTPError{Code: 550, EnhancedCode: gosmtp.EnhancedCode{5, 1, 1}, Message: "No such user"}
	}
	s.to = to
	return nil
}

func (s *farSession) Data(r io.Reader) error {
	if s.f.cfg.dataErr != nil {
		return s.f.cfg.dataErr
	}
	s.f.received.Add(1)
	n := s.f.inData.Add(1)
	defer s.f.inData.Add(-1)
	for {
		m := s.f.maxInData.Load()
		if n <= m || s.f.maxInData.CompareAndSwap(m, n) {
			break
		}
	}
	if s.f.cfg.cutAfter > 0 {
		_, _ = io.ReadFull(r, make([]byte, s.f.cfg.cutAfter))
		_ = s.c.Conn().Close()
		return nil
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := s.c.TLSConnectionState()
	s.f.mu.Lock()
	s.f.mails = append(s.f.mails, farMail{from: s.from, to: s.to, raw: raw, tls: isTLS, user: s.user})
	s.f.mu.Unlock()
	if s.f.cfg.onData != nil {
		return s.f.cfg.onData(s.f, s.c, raw)
	}
	return nil
}

func (s *farSession) Reset() { s.from, s.to = "", "" }

func (s *farSession) Logout() error {
	s.f.logouts.Add(1)
	s.f.mu.Lock()
	delete(s.f.conns, s.c)
	s.f.mu.Unlock()
	return nil
}

// stall keeps the final reply back until the test ends.
func stall(f *far, _ *gosmtp.Conn, _ []byte) error {
	<-f.released
	return nil
}

// drop breaks the connection after reading the whole message, without a reply.
func drop(_ *far, c *gosmtp.Conn, _ []byte) error {
	_ = c.Conn().Close()
	return nil
}

// reply answers the final "." with code.
func reply(code int) func(*far, *gosmtp.Conn, []byte) error {
	return func(*far, *gosmtp.Conn, []byte) error {
		return &gosmtp.SMTPError{Code: code, Message: "scripted reply"}
	}
}

// loginServer is the server side of AUTH LOGIN (go-sasl has only the client).
type loginServer struct {
	user  string
	step  int
	check func(user, pass string) error
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step++
		if resp == nil {
			return []byte("Username:"), false, nil
		}
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	case 1:
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(l.user, string(resp))
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
func (nopLogger) Println(...any)        {}
