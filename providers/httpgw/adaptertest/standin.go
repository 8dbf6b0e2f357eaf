package adaptertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"switchboard/providers/httpgw"
)

// ErrNoSends is the error (wrapped) of an adapter whose golden cases answer no send: each of
// them holds callbacks only, so a stand-in has nothing to answer a request with.
var ErrNoSends = errors.New("no golden case answers a send (sendN/answer.http)")

// minReference is the shortest provider reference a stand-in rewrites per answer: a shorter
// one could stand for other text of the answer ("1", "ok").
const minReference = 4

// wordChars are the characters a rewritten reference may not touch on either side: it is
// rewritten where it stands whole ("gw-1", not inside "gw-10").
const wordChars = `A-Za-z0-9_.\-`

// StandInOptions configure a StandIn.
type StandInOptions struct {
	// CallbackURL is the provider's callback route (…/v1/provider-callbacks/{provider}); the
	// query of a case's callback is added to it.
	CallbackURL string
	// Verifier is the runtime's callbackVerifier for the provider: every callback is signed so
	// that it verifies. Without one (an adapter that takes no callbacks) none is posted.
	Verifier *httpgw.VerifierConfig
	// CallbackDelay is the pause before each callback, as a gateway reports later.
	CallbackDelay time.Duration
	// Client posts the callbacks (nil: a client with a 10-second timeout).
	Client *http.Client
	// Logger logs each answer and each callback (nil: nothing is logged).
	Logger *slog.Logger
	// Now dates the signatures (nil: time.Now).
	Now func() time.Time
}

// StandIn is a gateway for `switchboard dev` that answers an adapter's requests as its golden
// cases say, then posts the callbacks the case gives after that answer to the provider's
// callback route.
//
// A request is answered by the first case (in file name order) whose first send's request has
// the request's method and path (the query is not compared), else by the first case with a
// send. Each case answers its sends in turn, starting again after the last; a send that made
// no request ("(no request)") is passed over. After an answer come the callbacks that follow
// that send in the file (those before the first send come after the first answer), each after
// CallbackDelay; a callback the case expects refused (`verified: false`) is left out, and each
// one posted is signed with Verifier, whether the case signs it or carries a gateway's
// signature. The provider reference of a send's outcome (4 characters or more) is rewritten to
// REFERENCE-devN, N counting the stand-in's answers, wherever it stands whole (not next to a
// letter, digit, _, . or -) in the answer and in its callbacks, so that each message has its
// own reference and its own reports.
type StandIn struct {
	opts     StandInOptions
	cases    []*standInCase
	basePath string
	params   map[string]string
	client   *http.Client
	log      *slog.Logger
	ctx      context.Context
	cancel   context.CancelFunc
	srv      *http.Server
	url      string
	wg       sync.WaitGroup

	mu      sync.Mutex
	answers int
	closed  bool
}

// standInCase is one case file's sends, in file order.
type standInCase struct {
	name  string
	steps []standInStep
	next  int // the step that answers next; guarded by StandIn.mu
}

// standInStep is one send of a case: the request it matches, its answer and the callbacks that
// follow it.
type standInStep struct {
	send         int
	method, path string // "" when the case records no request (it matches any)
	answer       *httpMessage
	reference    string
	callbacks    []event
}

// NewStandIn reads the adapter folder dir and its golden cases. err wraps ErrNoCases when the
// folder has none, ErrNoSends when none answers a send; a case that does not parse is an error
// naming it.
func NewStandIn(dir string, opts StandInOptions) (*StandIn, error) {
	a, err := loadAdapter(dir)
	if err != nil {
		return nil, err
	}
	files, err := a.cases()
	if err != nil {
		return nil, err
	}
	s := &StandIn{opts: opts, client: opts.Client, log: opts.Logger}
	var first *caseFile
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("adapter %s: %w", dir, err)
		}
		c, err := parseCase(file, data)
		if err != nil {
			return nil, err
		}
		sc, err := newStandInCase(c)
		if err != nil {
			return nil, err
		}
		if len(sc.steps) == 0 {
			continue
		}
		if first == nil {
			first = c
		}
		s.cases = append(s.cases, sc)
	}
	if first == nil {
		return nil, fmt.Errorf("adapter %s: %w", dir, ErrNoSends)
	}
	cfg, _, err := a.buildConfig(first, "http://stand-in.invalid", nil, false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", first.path, err)
	}
	s.basePath, s.params = cfg.BaseURL.EscapedPath(), cfg.Parameters
	if s.client == nil {
		s.client = &http.Client{Timeout: 10 * time.Second}
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.opts.Now == nil {
		s.opts.Now = time.Now
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// newStandInCase groups a case's events into the sends a stand-in answers.
func newStandInCase(c *caseFile) (*standInCase, error) {
	sc := &standInCase{name: filepath.Base(c.path)}
	var pending []event // callbacks before the first send that reached the gateway
	for _, ev := range c.events {
		if ev.kind == kindCallback {
			if expectsRefused(c.want[ev.prefix()+"receipts.yaml"]) {
				continue
			}
			if n := len(sc.steps); n > 0 {
				sc.steps[n-1].callbacks = append(sc.steps[n-1].callbacks, ev)
			} else {
				pending = append(pending, ev)
			}
			continue
		}
		req := c.want[ev.prefix()+"request.http"]
		if strings.TrimSpace(req) == strings.TrimSpace(noRequest) {
			continue
		}
		answer, err := parseAnswer(ev.input)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", c.path, ev.inputName(), err)
		}
		step := standInStep{send: ev.n, answer: answer, callbacks: pending,
			reference: referenceOf(c.want[ev.prefix()+"outcome.yaml"])}
		pending = nil
		if m, err := parseHTTPMessage([]byte(req)); err == nil {
			if method, target, err := m.requestLine(); err == nil {
				step.method = method
				step.path, _, _ = strings.Cut(target, "?")
			}
		}
		sc.steps = append(sc.steps, step)
	}
	return sc, nil
}

// expectsRefused reports whether a callback's receipts.yaml says it is not verified.
func expectsRefused(receipts string) bool {
	var r struct {
		Verified *bool `yaml:"verified"`
	}
	return yaml.Unmarshal([]byte(receipts), &r) == nil && r.Verified != nil && !*r.Verified
}

// referenceOf is the providerReference of a send's outcome.yaml ("" without one).
func referenceOf(outcome string) string {
	var o struct {
		ProviderReference string `yaml:"providerReference"`
	}
	if yaml.Unmarshal([]byte(outcome), &o) != nil {
		return ""
	}
	return o.ProviderReference
}

// Start listens on addr and returns the stand-in's URL (http://host:port, without path).
func (s *StandIn) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("stand-in listen: %w", err)
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 10 * time.Second}
	// One connection per request, as the golden cases' gateway: no request is ever replayed.
	s.srv.SetKeepAlivesEnabled(false)
	go func() { _ = s.srv.Serve(ln) }()
	s.url = "http://" + ln.Addr().String()
	return s.url, nil
}

// BaseURL is the provider's baseUrl against the stand-in: its URL and the path of the adapter's
// baseUrl (runtime-snippet.yaml or the first case's setup.yaml, with the case's env).
func (s *StandIn) BaseURL() string { return s.url + s.basePath }

// Parameters are the adapter's parameters (runtime-snippet.yaml, with the first case's env).
func (s *StandIn) Parameters() map[string]string {
	out := make(map[string]string, len(s.params))
	for k, v := range s.params {
		out[k] = v
	}
	return out
}

// Cases names the case files that answer sends, in the order they are tried.
func (s *StandIn) Cases() []string {
	names := make([]string, len(s.cases))
	for i, c := range s.cases {
		names[i] = c.name
	}
	return names
}

// Close stops the server and the callbacks still waiting.
func (s *StandIn) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	if s.srv != nil {
		_ = s.srv.Close()
	}
	s.wg.Wait()
}

// pick is the case that answers a request.
func (s *StandIn) pick(method, path string) *standInCase {
	for _, c := range s.cases {
		if first := c.steps[0]; first.method == "" || first.method == method && first.path == path {
			return c
		}
	}
	return s.cases[0]
}

func (s *StandIn) serve(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, 16<<20))
	c := s.pick(r.Method, r.URL.EscapedPath())
	s.mu.Lock()
	step := c.steps[c.next]
	c.next = (c.next + 1) % len(c.steps)
	s.answers++
	n := s.answers
	post := !s.closed && s.opts.Verifier != nil && len(step.callbacks) > 0
	if post {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	ref := newReference(step.reference, n)
	answer := ref.message(step.answer)
	s.log.Info("answered from a golden case", "case", c.name, "send", step.send, "answer", answer.start,
		"method", r.Method, "path", r.URL.Path, "reference", ref.to)
	writeAnswer(w, answer)
	if post {
		go s.postCallbacks(c.name, step.callbacks, ref)
	}
}

// postCallbacks posts a send's callbacks in order, each after the delay.
func (s *StandIn) postCallbacks(name string, callbacks []event, ref reference) {
	defer s.wg.Done()
	for _, ev := range callbacks {
		if s.opts.CallbackDelay > 0 {
			t := time.NewTimer(s.opts.CallbackDelay)
			select {
			case <-s.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		status, err := s.post(ev, ref)
		switch {
		case s.ctx.Err() != nil:
			return
		case err != nil:
			s.log.Warn("a golden case's callback failed", "case", name, "callback", ev.n, "error", err)
		case status >= 300:
			s.log.Warn("a golden case's callback was refused", "case", name, "callback", ev.n, "status", status)
		default:
			s.log.Info("posted a golden case's callback", "case", name, "callback", ev.n, "status", status)
		}
	}
}

// post signs and posts one callback and returns the status it was answered with.
func (s *StandIn) post(ev event, ref reference) (int, error) {
	m, err := parseHTTPMessage(ev.input)
	if err != nil {
		return 0, err
	}
	method, target, err := m.requestLine()
	if err != nil {
		return 0, err
	}
	m.header.Del(signDirective)
	m = ref.message(m)
	u := s.opts.CallbackURL
	if _, query, ok := strings.Cut(ref.replace(target), "?"); ok {
		u += "?" + query
	}
	r, err := http.NewRequestWithContext(s.ctx, method, u, nil)
	if err != nil {
		return 0, fmt.Errorf("callback request: %w", err)
	}
	r.Header = m.header
	body, err := signer{cfg: s.opts.Verifier}.signCallback(r, m.body, ev.n, s.opts.Now())
	if err != nil {
		return 0, err
	}
	r.Body, r.ContentLength = io.NopCloser(strings.NewReader(string(body))), int64(len(body))
	resp, err := s.client.Do(r)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// reference rewrites a case's provider reference for one answer.
type reference struct {
	from *regexp.Regexp // nil: nothing is rewritten
	to   string
}

// newReference is the rewrite of answer n; a short or missing reference is kept as it is.
func newReference(ref string, n int) reference {
	if len(ref) < minReference {
		return reference{to: ref}
	}
	whole := regexp.MustCompile(`(^|[^` + wordChars + `])` + regexp.QuoteMeta(ref) + `($|[^` + wordChars + `])`)
	return reference{from: whole, to: ref + "-dev" + strconv.Itoa(n)}
}

func (r reference) replace(s string) string {
	if r.from == nil {
		return s
	}
	return r.from.ReplaceAllString(s, "${1}"+strings.ReplaceAll(r.to, "$", "$$")+"${2}")
}

// message is m with the reference rewritten in its header values and body.
func (r reference) message(m *httpMessage) *httpMessage {
	if r.from == nil {
		return m
	}
	out := &httpMessage{start: m.start, header: http.Header{}, body: []byte(r.replace(string(m.body)))}
	for name, values := range m.header {
		for _, v := range values {
			out.header.Add(name, r.replace(v))
		}
	}
	return out
}
