package mockpush

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// Protocol is the gateway a Server speaks.
type Protocol string

// The two gateways.
const (
	FCM  Protocol = "fcm"
	APNs Protocol = "apns"
)

// DeadPrefix starts the device tokens a Server treats as unregistered.
const DeadPrefix = "dead"

// Options configure a Server.
type Options struct {
	Protocol Protocol
	Logger   *slog.Logger
	// Now dates access tokens and checks grants and provider tokens; nil is time.Now.
	Now func() time.Time
	// TokenLifetime is an FCM access token's; 0 is one hour.
	TokenLifetime time.Duration
	// ProviderMaxAge is how old an APNs provider token may be; 0 is one hour.
	ProviderMaxAge time.Duration
}

// Notification is one notification a Server accepted.
type Notification struct {
	Token string
	Title string
	Body  string
	Data  map[string]string
}

// Server is one mock gateway.
type Server struct {
	opts Options
	cred credential
	cert *certificate
	srv  *http.Server
	url  string

	mu     sync.Mutex
	tokens map[string]time.Time // FCM access tokens issued, with their expiry
	sent   []Notification
}

// New returns a Server for opts; Start makes its certificate and listens.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TokenLifetime <= 0 {
		opts.TokenLifetime = time.Hour
	}
	if opts.ProviderMaxAge <= 0 {
		opts.ProviderMaxAge = time.Hour
	}
	return &Server{opts: opts, tokens: map[string]time.Time{}}
}

// Start listens on addr (host:port, a loopback address) with a new certificate for that host
// and returns the server's URL, https://host:port.
func (s *Server) Start(addr string) (string, error) {
	if s.opts.Protocol != FCM && s.opts.Protocol != APNs {
		return "", fmt.Errorf("mockpush: unknown protocol %q", s.opts.Protocol)
	}
	cred, err := newCredential(s.opts.Protocol)
	if err != nil {
		return "", err
	}
	cert, err := newCertificate(time.Now()) // TLS checks it by the wall clock, whatever Now says

	if err != nil {
		return "", err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("mockpush: listen: %w", err)
	}
	s.cred, s.cert = cred, cert
	var protocols http.Protocols
	protocols.SetHTTP1(s.opts.Protocol == FCM) // APNs speaks HTTP/2 alone
	protocols.SetHTTP2(true)
	s.srv = &http.Server{Handler: s.handler(), ReadHeaderTimeout: 10 * time.Second, Protocols: &protocols,
		ErrorLog:  slog.NewLogLogger(s.opts.Logger.Handler(), slog.LevelDebug),
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.tls}, MinVersion: tls.VersionTLS12}}
	go func() { _ = s.srv.ServeTLS(ln, "", "") }()
	s.url = "https://" + ln.Addr().String()
	return s.url, nil
}

// URL is the server's https://host:port ("" before Start).
func (s *Server) URL() string { return s.url }

// CertificatePEM is the server's certificate, which signs itself: the one a client trusts.
func (s *Server) CertificatePEM() []byte { return s.cert.pem }

// Close stops the server.
func (s *Server) Close() error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Close()
}

// Sent returns the notifications accepted so far, oldest first.
func (s *Server) Sent() []Notification {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Notification(nil), s.sent...)
}

func (s *Server) handler() http.Handler {
	if s.opts.Protocol == FCM {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /token", s.fcmToken)
		mux.HandleFunc("POST /v1/projects/{project}/{send}", s.fcmSend)
		return mux
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /3/device/{token}", s.apnsSend)
	return mux
}

// accept records a notification and returns its ordinal.
func (s *Server) accept(n Notification) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sent = append(s.sent, n)
	return len(s.sent)
}
