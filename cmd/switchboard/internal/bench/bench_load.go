package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"switchboard/packages"
	"switchboard/packages/httpconn"
)

// benchChannels lists the channels a --channel value sends on, in round-robin order.
func benchChannels(channel string) []string {
	if channel == "mixed" {
		return []string{"sms", "email", "peer"}
	}
	return []string{channel}
}

// benchBodies builds one submission body per channel from the package: the first sender
// access profile's first sender profile and template on that channel, with the template's
// sample data in its first locale. The recipient is the stand-in's: a test phone number, a
// mailbox the SMTP sink takes, the companion peer.
func benchBodies(pkg *packages.Package, companion string, channels []string) (map[string][]byte, error) {
	var ap *packages.AccessProfile
	for _, p := range pkg.AccessProfiles {
		if p.Role == "sender" && len(p.Clients) > 0 {
			ap = p
			break
		}
	}
	if ap == nil {
		return nil, refused("bench.no-sender", "accessProfiles", "the package has no sender access profile with a client")
	}
	recipients := map[string]map[string]string{
		"sms": {"phone": "+15550100123"}, "email": {"email": "patient@example.net"}, "peer": {"peer": companion},
	}
	out := map[string][]byte{}
	for _, ch := range channels {
		var sp *packages.SenderProfile
		for _, id := range ap.SenderProfiles {
			if p := pkg.SenderProfile(id); p != nil && p.Channel == ch {
				sp = p
				break
			}
		}
		var tpl *packages.Template
		for _, t := range pkg.Templates {
			if t.Channel == ch && t.Sample != nil && len(t.Locales) > 0 && ap.AllowsTemplate(t.ID) {
				tpl = t
				break
			}
		}
		if sp == nil || tpl == nil {
			return nil, refused("bench.channel-unavailable", ch,
				"the package's sender access profile "+ap.ID+" has no sender profile and sampled template on this channel")
		}
		body, err := json.Marshal(map[string]any{
			"senderProfile": sp.ID, "to": recipients[ch],
			"template": map[string]string{"id": tpl.ID, "version": tpl.Version},
			"locale":   tpl.Locales[0], "data": tpl.Sample,
		})
		if err != nil {
			return nil, fmt.Errorf("encode the %s submission: %w", ch, err)
		}
		out[ch] = body
	}
	return out, nil
}

// load submits cfg.Messages messages from cfg.Callers callers, each with its own
// Idempotency-Key, in a closed loop (a burst) or, with a rate, an open loop (open_loop.go);
// accepted counts the 202s.
func (e *benchEnv) load(ctx context.Context, cfg Config, bodies map[string][]byte, accepted *atomic.Int64) ([]benchSample, time.Time) {
	channels := benchChannels(cfg.Channel)
	samples := make([]benchSample, cfg.Messages)
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	apis := e.stack.APIs
	for c := range cfg.Callers {
		// Each caller keeps to one instance, the callers spread evenly over them.
		submitURL := &url.URL{Scheme: "http", Host: apis[c%len(apis)], Path: "/v1/messages"}
		wg.Go(func() {
			conn := &httpconn.Conn{Addr: submitURL.Host}
			defer conn.Close()
			for {
				i := int(next.Add(1) - 1)
				if i >= cfg.Messages || ctx.Err() != nil {
					return
				}
				due, taken, late := time.Now(), time.Duration(0), time.Duration(0)
				if cfg.OpenLoop() {
					// A caller takes submission i up once it is free; if that is after i was
					// due, every caller was still waiting for an answer then.
					due = start.Add(dueAt(i, cfg.Rate))
					taken = max(0, time.Since(due))
					if !sleepUntil(ctx, due) {
						return
					}
					late = time.Since(due)
				}
				ch := channels[i%len(channels)]
				status, id := e.submit(ctx, conn, submitURL, "bench-"+runID+"-"+strconv.Itoa(i), bodies[ch])
				samples[i] = benchSample{Index: i, Channel: ch, Start: due, Taken: taken, Late: late, Accept: time.Since(due), HTTPStatus: status, ID: id}
				if status == http.StatusAccepted {
					accepted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return samples, start
}

// sleepUntil waits until t or until ctx ends; it reports whether t was reached.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}

// submit posts one message on the caller's connection and returns the status code and, on
// 202, the message id.
func (e *benchEnv) submit(ctx context.Context, conn *httpconn.Conn, to *url.URL, key string, body []byte) (int, string) {
	req := &http.Request{Method: http.MethodPost, URL: to, Host: to.Host, ContentLength: int64(len(body)),
		Header: http.Header{
			"Content-Type":    {"application/json"},
			"Authorization":   {"Bearer " + e.sender},
			"Idempotency-Key": {key},
		}}
	status, raw, err := conn.Do(ctx, req, body)
	if err != nil {
		return 0, ""
	}
	if status != http.StatusAccepted {
		return status, ""
	}
	var a struct {
		ID string `json:"id"`
	}
	if json.Unmarshal(raw, &a) != nil || a.ID == "" {
		return 0, ""
	}
	return status, a.ID
}

// getJSON reads one API resource with a token into out and returns the status code.
func (e *benchEnv) getJSON(ctx context.Context, path, token string, out any) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.apiURL+path, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, err
	}
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, json.Unmarshal(raw, out)
}
