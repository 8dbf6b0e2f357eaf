package api

import (
	"errors"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"switchboard/engine"
)

// callback is POST /v1/provider-callbacks/{provider}[/{token}]. It verifies first, charged to a
// per-provider token bucket; an unverified request learns nothing (not even whether the
// provider exists). The parsed receipts go to the engine (engine.Receipts), which decides what
// each may do. Unmatched, duplicate and ignored receipts still answer 204.
func (s *Server) callback(w http.ResponseWriter, r *http.Request) {
	providerID := r.PathValue("provider")
	handler, ok := s.cfg.Receipts[providerID]
	if !ok {
		s.writeProblem(w, r, engine.ErrCallbackUnverified)
		return
	}
	if wait := s.callbacks.reserve(providerID, s.cfg.Clock.Now()); wait > 0 {
		s.writeProblem(w, r, &engine.Problem{Code: engine.CodeRateLimitExceeded, Detail: "too many callbacks for this provider", RetryAfter: wait})
		return
	}
	body, err := readRaw(r)
	if err != nil {
		s.writeProblem(w, r, err)
		return
	}
	if err := handler.VerifyCallback(r, r.PathValue("token"), body); err != nil {
		s.log.Debug("callback unverified", "provider", providerID, "client", s.cfg.TrustedProxies.ClientAddr(r), "err", err)
		s.writeProblem(w, r, engine.ErrCallbackUnverified)
		return
	}
	var cb engine.Callback
	if ch, ok := handler.(engine.CallbackHandler); ok {
		cb, err = ch.ParseCallback(r.Context(), r, body)
	} else {
		cb.Receipts, err = handler.ParseReceipts(r.Context(), r, body)
	}
	if err != nil {
		p := &engine.Problem{Code: engine.CodeCallbackUnreadable, Detail: "the callback could not be read", Err: err}
		if named := (*engine.Problem)(nil); errors.As(err, &named) && named.Code == engine.CodeCallbackUnreadable && named != engine.ErrCallbackUnreadable {
			p.Detail = named.Detail // an item the inbox cannot keep, by member (engine.CheckInbound)
		}
		if !errors.Is(err, engine.ErrCallbackUnreadable) {
			p.Code, p.Detail = engine.CodeServiceUnavailable, "the callback could not be handled now"
		}
		s.writeProblem(w, r, p)
		return
	}
	if len(cb.Receipts) > 0 {
		rec, err := engine.NewReceipts(engine.ReceiptsConfig{Store: s.cfg.Store, Clock: s.cfg.Clock, Logger: s.log})
		if err == nil {
			_, err = rec.Record(r.Context(), providerID, cb.Receipts)
		}
		if err != nil {
			s.writeProblem(w, r, &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "receipts cannot be stored now", Err: err})
			return
		}
	}
	if len(cb.Inbound) > 0 {
		if err := s.storeInbound(r, providerID, handler, cb.Inbound); err != nil {
			s.writeProblem(w, r, err)
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// storeInbound stores a callback's inbound items in the inbox (each once per provider
// reference: a repeat answers as the first did). A refused item is 422 callback.unreadable,
// anything else the store could not do 503.
func (s *Server) storeInbound(r *http.Request, providerID string, handler engine.ReceiptHandler, items []engine.InboundItem) error {
	ch, ok := handler.(engine.CallbackHandler)
	if !ok || s.cfg.GatewayInbox == nil {
		return engine.NewProblem(engine.CodeServiceUnavailable, "this server keeps no inbox for gateways")
	}
	if _, err := s.cfg.GatewayInbox.PutInbound(r.Context(), providerID, ch.InboundChannel(), items); err != nil {
		if engine.CodeOf(err) == engine.CodeCallbackUnreadable {
			return err
		}
		return &engine.Problem{Code: engine.CodeServiceUnavailable, Detail: "inbound messages cannot be stored now", Err: err}
	}
	return nil
}

// callbackLimiter is a token bucket per provider, so that a flood of forged callbacks costs
// bounded verification work.
type callbackLimiter struct {
	mu      sync.Mutex
	perSec  float64
	burst   int
	buckets map[string]*rate.Limiter
}

func newCallbackLimiter(perSec float64, burst int) *callbackLimiter {
	return &callbackLimiter{perSec: perSec, burst: burst, buckets: map[string]*rate.Limiter{}}
}

// reserve takes one token for provider at now and returns 0, or how long until one is back.
func (c *callbackLimiter) reserve(provider string, now time.Time) time.Duration {
	c.mu.Lock()
	l, ok := c.buckets[provider]
	if !ok {
		l = rate.NewLimiter(rate.Limit(c.perSec), c.burst)
		c.buckets[provider] = l
	}
	c.mu.Unlock()
	if l.AllowN(now, 1) {
		return 0
	}
	res := l.ReserveN(now, 1)
	d := res.DelayFrom(now)
	res.CancelAt(now)
	if d < time.Second {
		d = time.Second
	}
	return d
}
