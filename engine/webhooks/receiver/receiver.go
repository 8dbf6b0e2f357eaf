// Package receiver is a local endpoint for Switchboard's events: it checks every delivery's
// Standard Webhooks signature, remembers the last events it took, counts duplicates by
// webhook-id and measures each event's lag (its body's timestamp, when the change was written,
// to its arrival). `switchboard dev` runs one and subscribes it; `switchboard bench --webhooks`
// measures with one. POST / takes an event (204, or 400 for a bad signature); GET /events lists
// the kept ones, newest last.
//
// receiver imports engine/stdwebhook and the standard library only.
package receiver

import (
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"switchboard/engine/stdwebhook"
)

// maxBody bounds one delivery the receiver reads (an inbox entry's payload may be large).
const maxBody = 64 << 20

// Event is one verified delivery as the receiver keeps it.
type Event struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Timestamp  time.Time       `json:"timestamp"`
	ReceivedAt time.Time       `json:"receivedAt"`
	Duplicate  bool            `json:"duplicate,omitempty"`
	Data       json.RawMessage `json:"data"`
}

// Stats are the receiver's counts.
type Stats struct {
	Received   int // verified deliveries, duplicates included
	Distinct   int // distinct webhook-ids
	Duplicates int // deliveries of an id already taken
	Refused    int // bad signature or body
	First      time.Time
	Last       time.Time
	// Lags are the lags of the distinct events, in arrival order (kept only with KeepLags).
	Lags []time.Duration
}

// Options configures a Receiver.
type Options struct {
	// Key is the endpoint's HMAC key (the decoded whsec_ secret).
	Key []byte
	// Keep is how many events GET /events lists (default 100).
	Keep int
	// KeepLags keeps every distinct event's lag (for the benchmark's percentiles).
	KeepLags bool
	// KeepData keeps each event's data (dev); without it Event.Data is empty.
	KeepData bool
	// Logger, when set, logs every event at info level, with its lag in milliseconds (lagMs).
	Logger *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
	// OnEvent, when set, is told about every verified delivery (data included), duplicates
	// too, in arrival order.
	OnEvent func(Event)
}

// Receiver is the endpoint: an http.Handler with an optional listener of its own.
type Receiver struct {
	opts Options

	mu     sync.Mutex
	seen   map[string]bool
	kept   []Event
	stats  Stats
	server *http.Server
}

// New returns a Receiver.
func New(opts Options) *Receiver {
	if opts.Keep <= 0 {
		opts.Keep = 100
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Receiver{opts: opts, seen: map[string]bool{}}
}

// Start listens on addr (for example "127.0.0.1:0") and returns the URL to subscribe.
func (rc *Receiver) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second}
	rc.mu.Lock()
	rc.server = srv
	rc.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String() + "/", nil
}

// Close stops the listener Start opened.
func (rc *Receiver) Close() error {
	rc.mu.Lock()
	srv := rc.server
	rc.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close()
}

// ServeHTTP takes POST / (an event) and GET /events (the kept events).
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/events":
		rc.mu.Lock()
		kept := slices.Clone(rc.kept)
		rc.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"events": kept})
	case r.Method == http.MethodPost:
		rc.take(w, r)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// take verifies and records one delivery.
func (rc *Receiver) take(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	now := rc.opts.Now()
	id := r.Header.Get(stdwebhook.HeaderID)
	ok, reason := err == nil, "unreadable body"
	if ok {
		ok, reason = stdwebhook.Check(rc.opts.Key, id, r.Header.Get(stdwebhook.HeaderTimestamp),
			r.Header.Get(stdwebhook.HeaderSignature), body, now)
	}
	var ev Event
	if ok {
		if err := json.Unmarshal(body, &ev); err != nil || ev.ID != id {
			ok, reason = false, "the body is not an event with the webhook-id"
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if !ok {
		rc.stats.Refused++
		if rc.opts.Logger != nil {
			rc.opts.Logger.Warn("event refused", "reason", reason)
		}
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	ev.ReceivedAt = now
	ev.Duplicate = rc.seen[id]
	rc.stats.Received++
	if rc.stats.First.IsZero() {
		rc.stats.First = now
	}
	rc.stats.Last = now
	if ev.Duplicate {
		rc.stats.Duplicates++
	} else {
		rc.seen[id] = true
		rc.stats.Distinct++
		if rc.opts.KeepLags {
			rc.stats.Lags = append(rc.stats.Lags, now.Sub(ev.Timestamp))
		}
	}
	if rc.opts.OnEvent != nil {
		rc.opts.OnEvent(ev)
	}
	if !rc.opts.KeepData {
		ev.Data = nil
	}
	if rc.opts.Logger != nil {
		rc.opts.Logger.Info("event", "id", ev.ID, "type", ev.Type, "duplicate", ev.Duplicate, "lagMs", lagMs(now.Sub(ev.Timestamp)))
	}
	rc.kept = append(rc.kept, ev)
	if len(rc.kept) > rc.opts.Keep {
		rc.kept = slices.Delete(rc.kept, 0, len(rc.kept)-rc.opts.Keep)
	}
	w.WriteHeader(http.StatusNoContent)
}

// lagMs is a lag in milliseconds, to a tenth, as the log shows it.
func lagMs(d time.Duration) float64 {
	return math.Round(float64(d)/float64(time.Millisecond)*10) / 10
}

// Stats returns the counts so far (a copy).
func (rc *Receiver) Stats() Stats {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	s := rc.stats
	s.Lags = slices.Clone(s.Lags)
	return s
}

// Seen reports whether an event with this webhook-id was taken.
func (rc *Receiver) Seen(id string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.seen[id]
}
