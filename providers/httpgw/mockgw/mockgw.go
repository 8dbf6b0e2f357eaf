package mockgw

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mathrand "math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options configures a Gateway. Zero members take the documented defaults.
type Options struct {
	// Latency is how long the gateway takes before answering an accepted message.
	Latency time.Duration
	// LatencyAfterTake spends Latency after taking the message rather than before: a client
	// that dies or gives up while waiting has sent it all the same (its answer was lost).
	LatencyAfterTake bool
	// CallbackURL receives the delivery reports; empty means no reports are posted.
	CallbackURL string
	// CallbackSecret keys the hex HMAC-SHA256 of each report body, sent in x-signature.
	CallbackSecret []byte
	// ReceiptDelay is how long after accepting a message its report is posted.
	ReceiptDelay time.Duration
	// FailTransient is the fraction (0..1) of requests answered 503 with Retry-After: 1 and not taken.
	FailTransient float64
	// TimeoutAfterReceive is the fraction (0..1) of requests taken (counted, reported) but never
	// answered: the connection is dropped when the client gives up or the gateway closes.
	TimeoutAfterReceive float64
	// IdempotencyKeys makes the gateway honour the Idempotency-Key request header as an
	// idempotent gateway does: a request whose key was taken before gets the first answer again
	// (201 with the same gateway reference) and is neither taken nor reported a second time.
	// Without it a repeated key is taken again like any request; Keys records keys either way.
	IdempotencyKeys bool
	// Seed makes the fractions reproducible; 0 picks a random seed.
	Seed uint64
	// ReceiptWorkers is the number of goroutines posting reports (default 8).
	ReceiptWorkers int
	// ReceiptQueue bounds the reports waiting to be posted (default 65536); when it is full,
	// answering new messages waits (back-pressure) rather than growing without bound.
	ReceiptQueue int
	// ReceiptAttempts bounds the posts of one report (default 5); 5xx and transport errors are
	// retried, 4xx are not.
	ReceiptAttempts int
	// ReceiptRetryDelay is the first pause between posts of one report, doubled each time
	// (default 100 ms).
	ReceiptRetryDelay time.Duration
	// HTTPClient posts the reports (default: a client with a 5 s timeout).
	HTTPClient *http.Client
	// Logger receives the gateway's logs; nil discards them.
	Logger *slog.Logger
}

// Stats counts what the gateway saw.
type Stats struct {
	// Requests is every POST /messages received, whatever became of it.
	Requests int
	// Unique is the number of distinct references taken.
	Unique int
	// Duplicates is the number of references taken more than once.
	Duplicates int
	// Replayed counts requests answered from an earlier take with the same Idempotency-Key
	// (IdempotencyKeys); they are not counted as taken.
	Replayed int
	// Refused counts requests answered 400 or 503 (not taken).
	Refused int
	// Stalled counts requests taken and never answered.
	Stalled int
	// ReceiptsPosted and ReceiptsFailed count reports delivered and given up.
	ReceiptsPosted, ReceiptsFailed int
	// ChatRequests is every POST chat.postMessage received; ChatMessages those taken.
	ChatRequests, ChatMessages int
}

// Gateway is the mock gateway: an http.Handler with an optional listener of its own.
type Gateway struct {
	opts    Options
	log     *slog.Logger
	client  *http.Client
	jobs    chan receiptJob
	closing chan struct{}
	workers sync.WaitGroup

	mu      sync.Mutex
	rng     *mathrand.Rand
	seen    map[string]int
	keys    keyLedger
	stats   Stats
	chats   map[string][]ChatMessage // by channel, oldest first
	chatSeq int
	server  *http.Server
	url     string

	closeOnce sync.Once
}

// message is the request body the quickstart adapter sends.
type message struct {
	To        string `json:"to"`
	From      string `json:"from"`
	Text      string `json:"text"`
	Reference string `json:"reference"`
}

// New returns a gateway with its receipt workers running. Serve it with Start or mount it as a
// handler; Close it in either case.
func New(opts Options) *Gateway {
	if opts.ReceiptWorkers <= 0 {
		opts.ReceiptWorkers = 8
	}
	if opts.ReceiptQueue <= 0 {
		opts.ReceiptQueue = 1 << 16
	}
	if opts.ReceiptAttempts <= 0 {
		opts.ReceiptAttempts = 5
	}
	if opts.ReceiptRetryDelay <= 0 {
		opts.ReceiptRetryDelay = 100 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	client := opts.HTTPClient
	if client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = opts.ReceiptWorkers
		client = &http.Client{Timeout: 5 * time.Second, Transport: t}
	}
	seed := opts.Seed
	if seed == 0 {
		seed = mathrand.Uint64()
	}
	g := &Gateway{
		opts:    opts,
		log:     opts.Logger,
		client:  client,
		jobs:    make(chan receiptJob, opts.ReceiptQueue),
		closing: make(chan struct{}),
		rng:     mathrand.New(mathrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		seen:    make(map[string]int),
		chats:   make(map[string][]ChatMessage),
		keys:    newKeyLedger(),
	}
	if opts.CallbackURL != "" {
		for range opts.ReceiptWorkers {
			g.workers.Add(1)
			go g.postReceipts()
		}
	}
	return g
}

// Start listens on addr (for example "127.0.0.1:0") and serves the gateway. It returns the
// base URL to configure as the provider's baseUrl, with a trailing slash.
func (g *Gateway) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("mockgw: listen %s: %w", addr, err)
	}
	srv := &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(g.log.Handler(), slog.LevelDebug)}
	g.mu.Lock()
	g.server, g.url = srv, "http://"+ln.Addr().String()+"/"
	g.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			g.log.Error("mock gateway stopped", "error", err)
		}
	}()
	return g.url, nil
}

// URL returns the base URL Start returned ("" before Start).
func (g *Gateway) URL() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.url
}

// Close stops the listener, drops stalled requests and stops the receipt workers: a report being
// posted completes, reports still waiting are dropped. It is safe to call more than once.
func (g *Gateway) Close() error {
	var err error
	g.closeOnce.Do(func() {
		close(g.closing)
		g.mu.Lock()
		srv := g.server
		g.mu.Unlock()
		if srv != nil {
			err = srv.Close()
		}
		g.workers.Wait()
	})
	return err
}

// Stats returns the counters so far.
func (g *Gateway) Stats() Stats {
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.stats
	s.Unique = len(g.seen)
	for _, n := range g.seen {
		if n > 1 {
			s.Duplicates++
		}
	}
	return s
}

// Seen returns how many times the gateway took a message with this reference.
func (g *Gateway) Seen(reference string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seen[reference]
}

// ServeHTTP handles POST …/messages (SMS), POST …/inbound (serveInbound), and the chat
// endpoints POST …/chat.postMessage and GET …/conversations.history (chat.go).
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case strings.HasSuffix(r.URL.Path, "/inbound"):
		g.serveInbound(w, r)
		return
	case strings.HasSuffix(r.URL.Path, "/chat.postMessage") && r.Method == http.MethodPost:
		g.serveChatPost(w, r)
		return
	case strings.HasSuffix(r.URL.Path, "/conversations.history") && r.Method == http.MethodGet:
		g.serveChatHistory(w, r)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/messages") {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "not found"})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "method not allowed"})
		return
	}
	g.mu.Lock()
	g.stats.Requests++
	roll := g.rng.Float64()
	g.mu.Unlock()

	var msg message
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = json.Unmarshal(body, &msg)
	}
	if msg.Reference == "" {
		msg.Reference = r.Header.Get("X-Request-Id")
	}
	if err != nil || msg.To == "" || msg.Text == "" || msg.Reference == "" {
		g.count(func(s *Stats) { s.Refused++ })
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "to, text and reference (or x-request-id) are required"})
		return
	}
	key := r.Header.Get("Idempotency-Key")
	switch {
	case roll < g.opts.FailTransient:
		g.count(func(s *Stats) { s.Refused++ })
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "try again later"})
	case roll < g.opts.FailTransient+g.opts.TimeoutAfterReceive:
		g.take(r.Context(), msg.Reference, key)
		g.count(func(s *Stats) { s.Stalled++ })
		select {
		case <-r.Context().Done():
		case <-g.closing:
		}
		panic(http.ErrAbortHandler) // drop the connection without an answer
	case g.opts.LatencyAfterTake:
		ref := g.take(r.Context(), msg.Reference, key)
		if !g.wait(r.Context(), g.opts.Latency) {
			panic(http.ErrAbortHandler)
		}
		writeJSON(w, http.StatusCreated, map[string]string{"id": ref})
	default:
		if !g.wait(r.Context(), g.opts.Latency) {
			panic(http.ErrAbortHandler)
		}
		ref := g.take(r.Context(), msg.Reference, key)
		writeJSON(w, http.StatusCreated, map[string]string{"id": ref})
	}
}

// take counts reference as taken under key (which may be empty), queues its report and
// returns its gateway reference. Under IdempotencyKeys, a key taken before is a replay: it
// returns the first take's gateway reference and neither counts nor reports anything again.
func (g *Gateway) take(ctx context.Context, reference, key string) string {
	g.mu.Lock()
	if ref, ok := g.keys.replay(key); ok && g.opts.IdempotencyKeys {
		g.stats.Replayed++
		g.mu.Unlock()
		return ref
	}
	ref := newReference()
	g.seen[reference]++
	g.keys.record(reference, key, ref)
	g.mu.Unlock()
	if g.opts.CallbackURL != "" {
		select {
		case g.jobs <- receiptJob{ref: ref, due: time.Now().Add(g.opts.ReceiptDelay)}:
		case <-ctx.Done():
		case <-g.closing:
		}
	}
	return ref
}

// wait pauses for d unless ctx ends or the gateway closes; it reports whether d passed.
func (g *Gateway) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-g.closing:
	}
	return false
}

func (g *Gateway) count(f func(*Stats)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	f(&g.stats)
}

// newReference returns a random gateway reference.
func newReference() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "gw-" + hex.EncodeToString(b[:])
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
