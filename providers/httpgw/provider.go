package httpgw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"

	"switchboard/engine"
	"switchboard/scripting"
)

// Codes of sends refused before any request.
const (
	// CodeClosed: Send was called after Close (transient: another process may send it).
	CodeClosed = "provider.closed"
	// CodeRateLimited: waiting for the provider's rate would pass the send's deadline.
	CodeRateLimited = "provider.rate-limited"
)

// Provider is one connected http gateway. It implements engine.Provider and
// engine.ReceiptHandler and is safe for concurrent use.
type Provider struct {
	cfg             Config
	program         *scripting.Program
	hasInterpret    bool
	requestHeaders  map[string]bool
	requestKeys     map[string]string // each declared request header: its canonical key
	responseHeaders map[string]bool
	client          *http.Client
	transport       *http.Transport // nil when the client came from Config
	cred            credential
	verifier        Verifier
	slots           chan struct{}
	limiter         *rate.Limiter  // nil without a rate
	parameters      map[string]any // Config.Parameters as the profile argument carries them
	lastTarget      atomic.Pointer[resolvedTarget]
	closed          atomic.Bool
	closeOnce       sync.Once
}

// New validates cfg, compiles the adapter once (CompileAdapter's rules) and builds the client, credential, verifier, concurrency limit
// and rate. A request header the package declares that the runtime owns (authorization, host,
// content-length, cookie, … and the static-api-key header) is refused here.
func New(cfg Config) (*Provider, error) {
	cfg, err := cfg.normalized()
	if err != nil {
		return nil, err
	}
	p := &Provider{
		cfg:             cfg,
		requestHeaders:  headerSet(cfg.RequestHeaders),
		responseHeaders: headerSet(cfg.ResponseHeaders),
		slots:           make(chan struct{}, cfg.ConcurrencyLimit),
	}
	if p.parameters, err = parametersInput(cfg.Parameters); err != nil {
		return nil, fmt.Errorf("httpgw %s: parameters: %w", cfg.ID, err)
	}
	if p.client, p.transport, err = newHTTPClient(cfg); err != nil {
		return nil, fmt.Errorf("httpgw %s: %w", cfg.ID, err)
	}
	if p.cred, err = newCredential(cfg.Auth, cfg.BaseURL, p.client, cfg.Clock, cfg.Timeout); err != nil {
		return nil, fmt.Errorf("httpgw %s: authentication: %w", cfg.ID, err)
	}
	p.requestKeys = make(map[string]string, len(p.requestHeaders))
	for name := range p.requestHeaders {
		if runtimeOwnedHeaders[name] || slices.Contains(p.cred.ownedHeaders(), name) || !validHeaderName(name) {
			return nil, fmt.Errorf("httpgw %s: request header %q is owned by the runtime or malformed", cfg.ID, name)
		}
		p.requestKeys[name] = http.CanonicalHeaderKey(name)
	}
	if p.verifier, err = NewVerifier(cfg.Verifier, cfg.Clock); err != nil {
		return nil, fmt.Errorf("httpgw %s: %w", cfg.ID, err)
	}
	if cfg.RatePerSecond > 0 {
		burst := int(math.Ceil(cfg.RatePerSecond))
		p.limiter = rate.NewLimiter(rate.Limit(cfg.RatePerSecond), max(1, min(burst, cfg.ConcurrencyLimit)))
	}
	if p.program, err = compileAdapter(cfg.ScriptName, cfg.Source, cfg.ReceiptsCallback, cfg.Limits, cfg.Logger); err != nil {
		return nil, fmt.Errorf("httpgw %s: adapter: %w", cfg.ID, err)
	}
	p.hasInterpret = p.program.Has("interpret")
	return p, nil
}

// Kind returns "http".
func (p *Provider) Kind() string { return "http" }

// Close drops pooled script runtimes and idle connections. It is safe to call more than once;
// later sends return a transient provider.closed outcome.
func (p *Provider) Close() error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		p.program.Close()
		if p.transport != nil {
			p.transport.CloseIdleConnections()
		}
	})
	return nil
}

// Send runs prepare, waits for a concurrency slot and the rate, sends the request with the
// credential and classifies the answer. It returns transient when ctx ends before the request
// is written and maybe-sent when it ends after. prepare runs before a slot is taken so that a
// slow script never holds a connection slot.
func (p *Provider) Send(ctx context.Context, out *engine.Outbound) engine.Outcome {
	if p.closed.Load() {
		return p.outcome(engine.OutcomeTransient, CodeClosed, "provider is closed")
	}
	if !out.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, out.Deadline)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return p.notSent(ctx, "before prepare")
	}
	req, refused := p.prepare(ctx, out)
	if refused != nil {
		return *refused
	}
	ans, failed := p.send(ctx, req)
	if failed != nil {
		return *failed
	}
	o, renew := p.classify(ctx, ans)
	if !renew {
		return o
	}
	// The gateway refused the credential as stale: renew it and send once more, and whatever
	// that answer is, it is the outcome.
	p.cred.rejected(ans.credential)
	if ans, failed = p.send(ctx, req); failed != nil {
		return *failed
	}
	o, _ = p.classify(ctx, ans)
	return o
}

// send waits for a concurrency slot and the rate, and makes one exchange.
func (p *Provider) send(ctx context.Context, req *outgoing) (*answer, *engine.Outcome) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		o := p.notSent(ctx, "waiting for a concurrency slot")
		return nil, &o
	}
	defer func() { <-p.slots }()
	if p.limiter != nil {
		if err := p.limiter.Wait(ctx); err != nil {
			if ctx.Err() != nil {
				o := p.notSent(ctx, "waiting for the provider's rate")
				return nil, &o
			}
			o := p.outcome(engine.OutcomeTransient, CodeRateLimited, err.Error())
			return nil, &o
		}
	}
	return p.exchange(ctx, req)
}

// prepare calls the adapter's prepare and validates its output. A deadline (which may pass
// next time) is transient; every other script failure is permanent: the same adapter would
// fail the same way on the same message.
func (p *Provider) prepare(ctx context.Context, out *engine.Outbound) (*outgoing, *engine.Outcome) {
	var po prepareOutput
	ok, err := p.program.CallInto(ctx, "prepare", &po, messageInput(out, p.cfg.IdempotentSubmit),
		profileInput(out.SenderProfile, p.cfg.CallbackURL, p.parameters))
	if err == nil && !ok {
		err = &outputInvalid{entry: "prepare", reason: "prepare returned null"}
	}
	if err != nil {
		if errors.Is(err, scripting.ErrClosed) {
			o := p.outcome(engine.OutcomeTransient, CodeClosed, "prepare: "+err.Error())
			return nil, &o
		}
		class := p.observeScript(err)
		if ctx.Err() != nil {
			o := p.notSent(ctx, "prepare: "+err.Error())
			return nil, &o
		}
		kind := engine.OutcomePermanent
		if class == scripting.ClassDeadline {
			kind = engine.OutcomeTransient
		}
		o := p.outcome(kind, "script."+class, "prepare: "+err.Error())
		return nil, &o
	}
	p.observeScript(nil)
	req, err := p.build(&po)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			o := p.outcome(engine.OutcomePermanent, r.code, "prepare: "+r.reason)
			return nil, &o
		}
		o := p.outcome(engine.OutcomePermanent, CodeBodyInvalid, "prepare: "+err.Error())
		return nil, &o
	}
	return req, nil
}

// notSent is the transient outcome of a send whose context ended before the request left.
func (p *Provider) notSent(ctx context.Context, where string) engine.Outcome {
	code := CodeCancelled
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		code = CodeTimeout
	}
	return p.outcome(engine.OutcomeTransient, code, "not sent: context ended "+where)
}

// outcome builds an outcome with the report that is known at send time: none when receipts
// will come by callback, else unavailable.
func (p *Provider) outcome(class engine.OutcomeClass, code, reason string) engine.Outcome {
	report := engine.ReportUnavailable
	if p.cfg.ReceiptsCallback {
		report = engine.ReportNone
	}
	return engine.Outcome{Class: class, Code: code, Reason: reason, Report: report}
}

// observeScript tells the Observer how a script call ended and returns the failure class
// ("ok" for nil, "failed" for an error that carries no class).
func (p *Provider) observeScript(err error) string {
	class := "ok"
	switch {
	case err == nil:
	case isOutputInvalid(err):
		class = scripting.ClassOutputInvalid
	default:
		if class = scripting.ClassOf(err); class == "" {
			class = scripting.ClassFailed
		}
	}
	p.cfg.Observer(EventScript, class)
	return class
}

// outputInvalid is a script output that decoded but that the provider refuses.
type outputInvalid struct {
	entry, reason string
}

func (e *outputInvalid) Error() string { return e.entry + ": output-invalid: " + e.reason }

// isOutputInvalid reports whether err is (or wraps) an *outputInvalid.
func isOutputInvalid(err error) bool {
	var invalid *outputInvalid
	return errors.As(err, &invalid)
}

// Interface guards.
var (
	_ engine.Provider        = (*Provider)(nil)
	_ engine.ReceiptHandler  = (*Provider)(nil)
	_ engine.CallbackHandler = (*Provider)(nil)
)
