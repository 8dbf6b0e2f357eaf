package mockgw

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"switchboard/packages/httpconn"
)

// receiptJob is one delivery report to post once due.
type receiptJob struct {
	ref string
	due time.Time
}

// postReceipts is one worker of the bounded pool: it posts due reports until the gateway
// closes. A post in flight when Close is called completes (bounded by the client's timeout) and
// is counted; reports still waiting, or pausing between retries, are dropped uncounted.
func (g *Gateway) postReceipts() {
	defer g.workers.Done()
	ctx := context.Background()
	p := g.newPoster(true)
	defer p.close()
	for {
		select {
		case job := <-g.jobs:
			if !g.wait(ctx, time.Until(job.due)) {
				return
			}
			switch g.deliver(ctx, p, job.ref) {
			case posted:
				g.count(func(s *Stats) { s.ReceiptsPosted++ })
			case failed:
				g.count(func(s *Stats) { s.ReceiptsFailed++ })
			case abandoned:
				return
			}
		case <-g.closing:
			return
		}
	}
}

// delivery is what became of one report.
type delivery int

const (
	posted delivery = iota
	failed
	abandoned // the gateway closed while pausing between retries
)

// deliver posts one report, retrying 429 and 5xx answers and transport errors with a doubling
// pause, at most ReceiptAttempts times.
func (g *Gateway) deliver(ctx context.Context, p *poster, ref string) delivery {
	body, _ := json.Marshal(map[string]string{"id": ref, "status": "delivered"})
	mac := hmac.New(sha256.New, g.opts.CallbackSecret)
	mac.Write(body)
	signature := hex.EncodeToString(mac.Sum(nil))
	pause := g.opts.ReceiptRetryDelay
	for attempt := 1; ; attempt++ {
		status, err := p.post(ctx, body, signature)
		switch {
		case err == nil && status < 300:
			return posted
		case err == nil && status == http.StatusTooManyRequests && attempt < g.opts.ReceiptAttempts:
			// Throttled: a real gateway backs off and posts the report again.
		case err == nil && status < 500:
			g.log.Warn("mock gateway: receipt refused", "reference", ref, "status", status)
			return failed
		case attempt >= g.opts.ReceiptAttempts:
			g.log.Warn("mock gateway: receipt given up", "reference", ref, "attempts", attempt, "status", status, "error", err)
			return failed
		}
		if !g.wait(ctx, pause) {
			return abandoned
		}
		pause *= 2
	}
}

// poster is one receipt worker's way to the callback route: its own keep-alive connection
// (httpconn.Conn) when the route is plain http and no HTTPClient was given, else the client.
// The gateway shares the benchmark's machine with the stack it measures, and an http.Client
// spends several times the CPU a Conn does on each report.
type poster struct {
	client *http.Client
	target *url.URL
	conn   *httpconn.Conn // nil: post with client
}

// newPoster returns a poster; own gives it a connection of its own where it can have one (a
// receipt worker's), else it posts with the gateway's client.
func (g *Gateway) newPoster(own bool) *poster {
	p := &poster{client: g.client}
	u, err := url.Parse(g.opts.CallbackURL)
	if err != nil {
		return p // post reports the error on each attempt
	}
	p.target = u
	if own && g.opts.HTTPClient == nil && u.Scheme == "http" && u.Host != "" {
		p.conn = &httpconn.Conn{Addr: u.Host, Timeout: 5 * time.Second}
	}
	return p
}

// close drops the worker's connection.
func (p *poster) close() {
	if p.conn != nil {
		p.conn.Close()
	}
}

// post sends one signed report and returns the answer's status. On its own connection a report
// that meets a broken connection is sent once more on a new one: the callback route takes a
// report again as the same one.
func (p *poster) post(ctx context.Context, body []byte, signature string) (int, error) {
	if p.target == nil {
		return 0, fmt.Errorf("receipt request: the callback URL does not parse")
	}
	if p.conn != nil {
		req := &http.Request{Method: http.MethodPost, URL: p.target, Host: p.target.Host,
			ContentLength: int64(len(body)), Header: http.Header{
				"Content-Type": {"application/json"}, "X-Signature": {signature},
			}}
		status, _, err := p.conn.Do(ctx, req, body)
		if err != nil {
			return 0, fmt.Errorf("receipt post: %w", err)
		}
		return status, nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.target.String(), bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("receipt request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", signature)
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("receipt post: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
