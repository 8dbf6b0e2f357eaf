package smtpsink

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// Defaults applied by New to zero Options members.
const (
	DefaultDomain          = "switchboard-dev-sink"
	DefaultMaxMessageBytes = 25 << 20
)

// DKIM results recorded per message (RFC 8601 words).
const (
	DKIMNone = "none" // no signature, or verification not configured
	DKIMPass = "pass" // at least one signature verifies
	DKIMFail = "fail" // signatures are present and none verifies
)

// Options configures a Sink. Zero members take the documented defaults.
type Options struct {
	// Domain is the name the sink greets with and writes in Authentication-Results.
	Domain string
	// TLSConfig, when set, makes the sink offer STARTTLS with it.
	TLSConfig *tls.Config
	// Username and Password, when Username is set, make AUTH PLAIN with exactly these
	// credentials required before MAIL FROM (offered in plain text too: the sink is a loopback
	// stand-in).
	Username, Password string
	// LookupTXT, when set, answers the DKIM key queries: every message's signatures are
	// verified and the result is recorded.
	LookupTXT func(name string) ([]string, error)
	// MaxMessageBytes refuses larger messages with 552; 0 means DefaultMaxMessageBytes.
	MaxMessageBytes int64
	// Now dates the stored files; nil means time.Now.
	Now func() time.Time
	// OnMessage, when set, is called after each message is stored and counted, from the
	// connection's goroutine. It must not block for long.
	OnMessage func(Mail)
	// Logger receives the sink's logs; nil discards them.
	Logger *slog.Logger
}

// Mail is one message the sink took.
type Mail struct {
	// Path is the .eml file, or "" when the sink keeps no files.
	Path string
	// MessageID is the Message-ID header value without angle brackets ("" when absent).
	MessageID string
	// From and To are the envelope addresses.
	From string
	To   []string
	// DKIM is DKIMNone, DKIMPass or DKIMFail.
	DKIM string
	// Size is the message size in bytes, as received.
	Size int
}

// Stats counts what the sink saw.
type Stats struct {
	// Messages is every message taken.
	Messages int
	// Unique is the number of distinct Message-IDs taken (a message without one counts apart).
	Unique int
	// Duplicates is the number of Message-IDs taken more than once.
	Duplicates int
	// DKIMPass and DKIMFail count the verification results (with LookupTXT set).
	DKIMPass, DKIMFail int
	// AuthFailures counts refused AUTH attempts.
	AuthFailures int
}

// Sink is the SMTP sink. It is safe for concurrent use.
type Sink struct {
	dir  string
	opts Options
	log  *slog.Logger

	mu       sync.Mutex
	server   *gosmtp.Server
	addr     string
	seq      uint64
	seen     map[string]int
	stats    Stats
	closed   bool
	inflight sync.WaitGroup // Data calls storing a message

	closeOnce sync.Once
}

// New returns a sink that keeps each message as an .eml file in dir (created at Start with
// mode 0700); dir "" keeps no files and only counts. Serve it with Start; Close it.
func New(dir string, opts Options) *Sink {
	if opts.Domain == "" {
		opts.Domain = DefaultDomain
	}
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sink{dir: dir, opts: opts, log: log, seen: map[string]int{}}
}

// Start listens on addr (for example "127.0.0.1:0") and serves in the background. It returns
// the address it listens on ("127.0.0.1:40123"). A sink starts once.
func (s *Sink) Start(addr string) (string, error) {
	if s.dir != "" {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return "", fmt.Errorf("smtpsink: create the mail folder: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.server != nil {
		return "", errors.New("smtpsink: already started or closed")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("smtpsink: listen on %s: %w", addr, err)
	}
	srv := gosmtp.NewServer(gosmtp.BackendFunc(s.newSession))
	srv.Domain = s.opts.Domain
	srv.TLSConfig = s.opts.TLSConfig
	srv.AllowInsecureAuth = true
	srv.MaxMessageBytes = s.opts.MaxMessageBytes
	srv.MaxRecipients = 100
	srv.EnableSMTPUTF8 = true
	srv.ReadTimeout = 5 * time.Minute
	srv.WriteTimeout = time.Minute
	srv.ErrorLog = slogPrinter{s.log}
	s.server, s.addr = srv, ln.Addr().String()
	go func() {
		if err := srv.Serve(ln); err != nil {
			s.log.Warn("smtp sink stopped serving", "error", err)
		}
	}()
	return s.addr, nil
}

// Addr returns the address Start listens on ("" before Start).
func (s *Sink) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Dir returns the folder the .eml files go to ("" when none are kept).
func (s *Sink) Dir() string { return s.dir }

// Close stops listening, drops every connection and waits for messages being stored. It is
// safe to call more than once.
func (s *Sink) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		srv := s.server
		s.mu.Unlock()
		if srv != nil {
			err = srv.Close()
		}
		s.inflight.Wait()
	})
	return err
}

// Stats returns a snapshot of the counters.
func (s *Sink) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// Count returns how many times a Message-ID was taken; id may carry its angle brackets.
func (s *Sink) Count(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[normalizeID(id)]
}

// record counts one stored message.
func (s *Sink) record(m Mail) {
	s.mu.Lock()
	s.stats.Messages++
	switch m.DKIM {
	case DKIMPass:
		s.stats.DKIMPass++
	case DKIMFail:
		s.stats.DKIMFail++
	}
	if m.MessageID == "" {
		s.stats.Unique++
	} else {
		n := s.seen[m.MessageID] + 1
		s.seen[m.MessageID] = n
		switch n {
		case 1:
			s.stats.Unique++
		case 2:
			s.stats.Duplicates++
		}
	}
	s.mu.Unlock()
	if s.opts.OnMessage != nil {
		s.opts.OnMessage(m)
	}
}

// normalizeID strips white space and angle brackets from a Message-ID.
func normalizeID(id string) string {
	return strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(id), "<"), ">")
}

// slogPrinter adapts go-smtp's error log to slog.
type slogPrinter struct{ log *slog.Logger }

func (p slogPrinter) Printf(format string, v ...any) {
	p.log.Debug("smtp sink: " + fmt.Sprintf(format, v...))
}

func (p slogPrinter) Println(v ...any) { p.log.Debug("smtp sink: " + fmt.Sprintln(v...)) }
