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
	"time"
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
	for {
		select {
		case job := <-g.jobs:
			if !g.wait(ctx, time.Until(job.due)) {
				return
			}
			switch g.deliver(ctx, job.ref) {
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
func (g *Gateway) deliver(ctx context.Context, ref string) delivery {
	body, _ := json.Marshal(map[string]string{"id": ref, "status": "delivered"})
	mac := hmac.New(sha256.New, g.opts.CallbackSecret)
	mac.Write(body)
	signature := hex.EncodeToString(mac.Sum(nil))
	pause := g.opts.ReceiptRetryDelay
	for attempt := 1; ; attempt++ {
		status, err := g.post(ctx, body, signature)
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

// post sends one signed report and returns the answer's status.
func (g *Gateway) post(ctx context.Context, body []byte, signature string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.opts.CallbackURL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("receipt request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Signature", signature)
	resp, err := g.client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("receipt post: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
