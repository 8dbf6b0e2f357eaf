package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"switchboard/engine"
	"switchboard/engine/auth"
	"switchboard/packages"
)

// Authenticator checks an Authorization header value. *auth.Verifier implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, authorization string) (*auth.Principal, error)
}

// Config wires a Server.
type Config struct {
	Package   *packages.Package
	Store     engine.Store
	Submitter *engine.Submitter
	Auth      Authenticator
	Limiter   *auth.Limiter
	// PseudonymKey keys the caller pseudonyms that messages and the journal hold.
	PseudonymKey []byte
	// Receipts are the providers that accept callbacks, by provider id.
	Receipts map[string]engine.ReceiptHandler
	// CallbackRate and CallbackBurst bound verification work per provider (token bucket).
	CallbackRate  float64
	CallbackBurst int
	Clock         engine.Clock
	Logger        *slog.Logger
	// Ready reports whether the database is migrated and reachable; nil means ready.
	Ready func(ctx context.Context) error
	// SLO feeds GET /v1/slo.
	SLO SLOSource
	// Inbox feeds GET /v1/inbox; nil answers 404 there.
	Inbox engine.Inbox
	// GatewayInbox stores the inbound messages gateways post with their callbacks.
	GatewayInbox engine.GatewayInbox
	// Observe, when set, is told about every answered request (for metrics).
	Observe func(route string, status int, d time.Duration)

	// Operator API and console (docs/api.md, docs/console.md); each nil member answers 404
	// on its routes.
	Journal       engine.Journal     // GET /v1/messages/{id}/audit
	Operations    *engine.Operations // POST /v1/operations, GET /v1/operations/{id}
	Figures       *engine.Figures    // GET /v1/figures
	VerifyJournal JournalCheck       // GET and POST /v1/audit/verification
	Console       ConsoleConfig      // /console/ when Enabled

	// PublicURL is the runtime's publicUrl (nil without one): its origin is the API's own for
	// the cross-site check, whatever Host a reverse proxy passes on.
	PublicURL *url.URL
	// TrustedProxies are the peers whose X-Forwarded-* headers are believed (client addresses
	// in logs, the origin of the cross-site check); empty believes none.
	TrustedProxies Proxies
}

// Server is the HTTP API.
type Server struct {
	cfg        Config
	log        *slog.Logger
	callbacks  *callbackLimiter
	pseudonyms *pseudonymMemo
	journal    *journalState
	mux        *http.ServeMux
	// consoleCSP is the console's Content-Security-Policy; empty while the console is off.
	consoleCSP string
}

// maxBody is the request body cap (docs/api.md, "Limits").
const maxBody = 1 << 20

// New builds the Server and its routes.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// Callbacks are verified before anything else; the bucket bounds the verification work a
	// flood of forged callbacks can cost, well above what a real gateway posts.
	if cfg.CallbackRate <= 0 {
		cfg.CallbackRate = 5000
	}
	if cfg.CallbackBurst <= 0 {
		cfg.CallbackBurst = 10000
	}
	s := &Server{cfg: cfg, log: cfg.Logger, mux: http.NewServeMux(), pseudonyms: newPseudonymMemo(cfg.PseudonymKey)}
	s.callbacks = newCallbackLimiter(cfg.CallbackRate, cfg.CallbackBurst)
	if cfg.VerifyJournal != nil {
		s.journal = newJournalState(cfg.Clock, cfg.VerifyJournal)
	}
	s.routes()
	return s
}

// Handler returns the root handler with the middleware every response passes through.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		setCommonHeaders(w.Header())
		if s.consoleCSP != "" && underConsole(r.URL.Path) {
			// Every answer there, also the router's own (a redirect, a 405) and a refusal.
			s.setConsoleHeaders(w.Header())
		}
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			if v := recover(); v != nil {
				s.log.Error("panic in handler", "traceId", traceOf(rec), "client", s.cfg.TrustedProxies.ClientAddr(r), "panic", v)
				if !rec.wrote {
					s.writeProblem(rec, r, engine.ErrServiceUnavailable)
				}
			}
			if s.cfg.Observe != nil {
				s.cfg.Observe(routeName(r), rec.status, time.Since(start))
			}
		}()
		if r.ContentLength > maxBody {
			s.writeProblem(rec, r, engine.NewProblem(engine.CodeBodyTooLarge, "the request body is over 1 MiB"))
			return
		}
		r.Body = http.MaxBytesReader(rec, r.Body, maxBody)
		if s.crossSite(r) {
			s.log.Debug("cross-site request refused", "client", s.cfg.TrustedProxies.ClientAddr(r), "route", r.URL.Path, "origin", r.Header.Get("Origin"))
			s.writeProblem(rec, r, errCrossSite)
			return
		}
		s.mux.ServeHTTP(rec, r)
	})
}

func newTraceID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// traceOf is the trace id of the request that w answers. The recorder makes it when first asked,
// so that only answers that carry one (problems, and the log lines beside them) pay for it, and
// a log line and the problem body name the same id.
func traceOf(w http.ResponseWriter) string {
	if rec, ok := w.(*statusRecorder); ok {
		if rec.trace == "" {
			rec.trace = newTraceID()
		}
		return rec.trace
	}
	return newTraceID()
}

// routeName is the matched pattern, so metrics never carry ids from paths.
func routeName(r *http.Request) string {
	if r.Pattern != "" {
		return r.Pattern
	}
	return "unmatched"
}

// statusRecorder remembers the status written, for metrics and the panic guard, and the
// request's trace id once one was needed.
type statusRecorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	trace  string
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}
