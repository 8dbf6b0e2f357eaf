package webhooks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"switchboard/engine"
	"switchboard/engine/retryafter"
	"switchboard/engine/stdwebhook"
)

// maxAnswerBytes is how much of an endpoint's answer is read (and discarded).
const maxAnswerBytes = 64 << 10

// userAgent names the sender.
const userAgent = "Switchboard-Webhooks/1"

// newClient is an endpoint's HTTP client: its own connections (so a slow endpoint holds only
// its own), as many idle ones as it has workers, and no redirects: a 3xx is the answer, and it
// is not a 2xx.
func newClient(ep Endpoint, rt http.RoundTripper) *http.Client {
	if rt == nil {
		t := &http.Transport{
			Proxy:                 nil,
			DialContext:           (&net.Dialer{Timeout: ep.Timeout, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:          ep.Concurrency,
			MaxIdleConnsPerHost:   ep.Concurrency,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   ep.Timeout,
			ResponseHeaderTimeout: ep.Timeout,
			ForceAttemptHTTP2:     true,
		}
		rt = t
	}
	return &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// deliver makes one attempt of a claimed row and records its outcome.
func (el *endpointLoop) deliver(ctx context.Context, d *delivery) {
	c := &d.claim
	var id string
	var body []byte
	var seq int64
	var err error
	var changed time.Time // when the change the event reports happened
	switch {
	case d.msg != nil:
		seq, changed = d.msg.Sequence, d.msg.UpdatedAt
		id, body, err = messageBody(d.msg)
	case d.entry != nil:
		seq, changed = 1, d.entry.ReceivedAt
		id, body, err = inboxBody(d.entry)
	case c.Type == engine.EventDeviceUnregistered && len(c.Data) > 0:
		seq, changed = c.Sequence, c.ChangedAt
		id, body, err = deviceBody(c)
	default:
		// Retention erased the subject (or reading it failed: then the next attempt reads it
		// again).
		el.failed(ctx, c, c.Sequence, 0, "the subject could not be read", 0)
		return
	}
	if err != nil {
		el.failed(ctx, c, seq, 0, "encode the event: "+err.Error(), 0)
		return
	}
	status, retryAfter, err := el.post(ctx, id, body)
	if err == nil && status >= 200 && status < 300 {
		el.finish(ctx, engine.EventOutcome{Lease: c.Lease, Sequence: seq, Delivered: true, Status: status,
			At: el.w.cfg.Clock.Now()}, OutcomeDelivered, changed)
		return
	}
	reason := fmt.Sprintf("answered %d", status)
	if err != nil {
		reason = err.Error()
	}
	el.failed(ctx, c, seq, status, reason, retryAfter)
}

// failed records a failed attempt: due again on the schedule, or failed when it is spent.
func (el *endpointLoop) failed(ctx context.Context, c *engine.EventClaim, seq int64, status int, reason string, retryAfter time.Duration) {
	now := el.w.cfg.Clock.Now()
	next, giveUp := nextAttempt(c.Attempts+1, now, retryAfter)
	outcome := OutcomeRetry
	if giveUp {
		outcome = OutcomeFailed
	}
	el.w.log.Debug("event delivery failed", "endpoint", el.ep.ID, "type", c.Type, "attempt", c.Attempts+1,
		"status", status, "reason", reason, "giveUp", giveUp)
	el.finish(ctx, engine.EventOutcome{Lease: c.Lease, Sequence: seq, GiveUp: giveUp, NextAttemptAt: next,
		Status: status, Error: reason, At: now}, outcome, c.ChangedAt)
}

// post sends one signed delivery and returns the answer's status and Retry-After. The answer is
// read up to maxAnswerBytes and discarded; the whole exchange ends within the endpoint's
// timeout.
func (el *endpointLoop) post(ctx context.Context, id string, body []byte) (int, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, el.ep.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, el.ep.URL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, fmt.Errorf("build the request: %w", err)
	}
	ts, sig := stdwebhook.Sign(el.ep.Key, id, el.w.cfg.Clock.Now(), body)
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", userAgent)
	h.Set(stdwebhook.HeaderID, id)
	h.Set(stdwebhook.HeaderTimestamp, ts)
	h.Set(stdwebhook.HeaderSignature, sig)
	resp, err := el.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswerBytes))
	return resp.StatusCode, retryafter.Parse(resp.Header.Get("Retry-After"), el.w.cfg.Clock.Now()), nil
}
