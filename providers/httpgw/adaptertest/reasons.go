package adaptertest

import (
	"context"
	"log/slog"
	"sync"
)

// reasonLog is the provider's logger in a case: it keeps the reason of the last callback the
// verifier refused, which the provider logs (and never answers), so that the runner can show it.
type reasonLog struct {
	mu   *sync.Mutex
	last *string
}

func newReasonLog() reasonLog { return reasonLog{mu: &sync.Mutex{}, last: new(string)} }

// logger returns a logger that writes to the reasonLog.
func (l reasonLog) logger() *slog.Logger { return slog.New(l) }

// take returns the last reason and forgets it.
func (l reasonLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	r := *l.last
	*l.last = ""
	return r
}

// Enabled accepts every level.
func (reasonLog) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps the reason attribute of a "callback unverified" record.
func (l reasonLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != "callback unverified" {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "reason" {
			l.mu.Lock()
			*l.last = a.Value.String()
			l.mu.Unlock()
		}
		return true
	})
	return nil
}

// WithAttrs and WithGroup keep writing to the same reasonLog.
func (l reasonLog) WithAttrs([]slog.Attr) slog.Handler { return l }

// WithGroup keeps writing to the same reasonLog.
func (l reasonLog) WithGroup(string) slog.Handler { return l }
