package scripting

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// testDeadline is the deadline of the calls that must be interrupted (see setDeadline).
const testDeadline = 50 * time.Millisecond

// newProgram compiles src with the given entry points (all required) and the options adjust
// sets, then gives every entry point generousDeadline: a test that expects an interrupt
// shortens its entry's deadline with setDeadline.
func newProgram(t testing.TB, src string, entries []string, adjust ...func(*Options)) *Program {
	t.Helper()
	o := Options{Required: entries}
	for _, a := range adjust {
		a(&o)
	}
	p, err := CompileWith("test.js", src, o)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	t.Cleanup(p.Close)
	for _, entry := range entries {
		setDeadline(p, entry, generousDeadline)
	}
	return p
}

// generousDeadline is the deadline of calls that must not be interrupted, even on a loaded
// machine under the race detector. Calls that hit a cap must fail well within it.
const generousDeadline = 10 * time.Second

// setDeadline changes the deadline of entry, even beyond what DefaultLimits allows, which
// only a test may do. It must run before the Program's calls.
func setDeadline(p *Program, entry string, d time.Duration) {
	deadlines := make(map[string]time.Duration, len(p.limits.Deadlines)+1)
	for k, v := range p.limits.Deadlines {
		deadlines[k] = v
	}
	deadlines[entry] = d
	p.limits.Deadlines = deadlines
	if info, ok := p.entries[entry]; ok { // Compile worked the deadline out once
		info.deadline = p.limits.deadline(entry)
		p.entries[entry] = info
	}
}

// call runs entry and returns the JSON result as a string.
func call(t testing.TB, p *Program, entry string, args ...any) (string, error) {
	t.Helper()
	out, err := p.Call(context.Background(), entry, args...)
	return string(out), err
}

// mustCall runs entry and fails the test on error.
func mustCall(t testing.TB, p *Program, entry string, args ...any) string {
	t.Helper()
	out, err := call(t, p, entry, args...)
	if err != nil {
		t.Fatalf("%s: %v", entry, err)
	}
	return out
}

// jsonString is the JSON encoding of s, without HTML escapes (as JSON.stringify writes it).
func jsonString(s string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// fakeClock moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 3, 14, 9, 30, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// captureHandler keeps the log records it receives; onRecord, when set, runs for each.
type captureHandler struct {
	mu       sync.Mutex
	records  []capturedRecord
	onRecord func(capturedRecord)
}

// capturedRecord is a log record flattened for assertions.
type capturedRecord struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

func (h *captureHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h *captureHandler) Handle(_ context.Context, r slog.Record) error {
	rec := capturedRecord{Level: r.Level, Message: r.Message, Attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.Attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, rec)
	onRecord := h.onRecord
	h.mu.Unlock()
	if onRecord != nil {
		onRecord(rec)
	}
	return nil
}

func (h *captureHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *captureHandler) WithGroup(string) slog.Handler      { return h }

// snapshot returns the records so far.
func (h *captureHandler) snapshot() []capturedRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]capturedRecord(nil), h.records...)
}
