package httpgw

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync/atomic"

	"switchboard/engine"
)

// Codes of sends that ended in the transport.
const (
	// CodeCancelled: the send's context ended (transient before the request was written,
	// maybe-sent after).
	CodeCancelled = "http.cancelled"
	// CodeTimeout: the provider's timeout passed.
	CodeTimeout = "http.timeout"
	// CodeConnectFailed: the connection could not be made or broke before the request was written.
	CodeConnectFailed = "http.connect-failed"
	// CodeConnectionLost: the connection broke after the request was written.
	CodeConnectionLost = "http.connection-lost"
	// CodeResponseTooLarge: the answer was larger than MaximumResponseBytes.
	CodeResponseTooLarge = "http.response-too-large"
)

// answer is a complete (or capped) gateway answer.
type answer struct {
	status   int
	header   http.Header
	body     []byte
	tooLarge bool
	// credential is what the credential put on the request, for rejected.
	credential string
}

// newHTTPClient returns the provider's client: never following redirects, bounded by the
// timeout, with keep-alive pooling sized for the concurrency limit, HTTP/2 only when cfg.HTTP2
// says so, and the roots of cfg.TrustedCAFile when it names one. A client given in cfg is
// copied and only its CheckRedirect is replaced.
func newHTTPClient(cfg Config) (*http.Client, *http.Transport, error) {
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		c.CheckRedirect = noRedirect
		return &c, nil, nil
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = cfg.ConcurrencyLimit * 2
	t.MaxIdleConnsPerHost = cfg.ConcurrencyLimit
	if cfg.TrustedCAFile != "" {
		pem, err := os.ReadFile(cfg.TrustedCAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("trustedCaFile: %w", err)
		}
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(pem) {
			return nil, nil, errors.New("trustedCaFile: holds no PEM certificate")
		}
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	if cfg.HTTP2 {
		// HTTP/2 alone: every request multiplexed over the connections kept, none falling back
		// to HTTP/1.1 (APNs answers only HTTP/2).
		var protocols http.Protocols
		protocols.SetHTTP2(true)
		protocols.SetUnencryptedHTTP2(cfg.BaseURL.Scheme == "http")
		t.Protocols = &protocols
	}
	return &http.Client{Transport: t, CheckRedirect: noRedirect, Timeout: cfg.Timeout}, t, nil
}

// exchange adds the credential, sends req within the provider's timeout and reads the answer
// up to MaximumResponseBytes. It returns either an answer or the outcome of a failed exchange.
// Whether the request was written decides between transient and maybe-sent; it is learned from
// httptrace's WroteRequest, which net/http calls before the last bytes are flushed, so a false
// "written" is possible (classified maybe-sent, the safe side) but a false "not written" is not.
func (p *Provider) exchange(ctx context.Context, req *outgoing) (*answer, *engine.Outcome) {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	header := req.header // built for this send alone (build): the credential goes on it
	used, err := p.cred.apply(ctx, header)
	if err != nil {
		var refused *grantRefused
		if errors.As(err, &refused) {
			p.cfg.Logger.Error("the gateway's token endpoint refused the credential", "error", err.Error())
			o := p.outcome(engine.OutcomePermanent, CodeGrantRefused, err.Error())
			return nil, &o
		}
		o := p.outcome(engine.OutcomeTransient, CodeTokenUnavailable, err.Error())
		return nil, &o
	}
	var wrote atomic.Bool
	trace := &httptrace.ClientTrace{WroteRequest: func(info httptrace.WroteRequestInfo) {
		if info.Err == nil {
			wrote.Store(true)
		}
	}}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), p.cfg.Method, req.url, bytes.NewReader(req.body))
	if err != nil {
		o := p.outcome(engine.OutcomePermanent, CodeTargetRefused, "building request: "+withoutURL(err))
		return nil, &o
	}
	hreq.Header = header
	if s, ok := p.cred.(requestSigner); ok {
		if err := s.sign(hreq, req.body); err != nil {
			o := p.outcome(engine.OutcomeTransient, CodeSigningFailed, err.Error())
			return nil, &o
		}
	}
	resp, err := p.roundTrip(hreq)
	if err != nil {
		o := p.transportFailure(ctx, wrote.Load(), err)
		return nil, &o
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusUnauthorized {
		p.cred.rejected(used)
	}
	ans := &answer{status: resp.StatusCode, header: resp.Header, credential: used}
	limit := p.cfg.MaximumResponseBytes
	if resp.ContentLength > limit {
		ans.tooLarge = true
		return ans, nil
	}
	ans.body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		o := p.transportFailure(ctx, true, err)
		return nil, &o
	}
	if int64(len(ans.body)) > limit {
		ans.body, ans.tooLarge = ans.body[:limit], true
	}
	return ans, nil
}

// roundTrip sends req once. Through the provider's own transport it goes straight to
// RoundTrip: there are no redirects to follow, no cookies to keep and the timeout is already
// in req's context, so all http.Client.Do would add is a copy of the headers and its own
// bookkeeping. A failure is wrapped as Do wraps it (the method, the URL, the cause), for
// withoutURL. A client given in the configuration is used as it is.
func (p *Provider) roundTrip(req *http.Request) (*http.Response, error) {
	if p.transport == nil {
		return p.client.Do(req)
	}
	resp, err := p.transport.RoundTrip(req)
	if err != nil {
		return nil, &url.Error{Op: req.Method[:1] + strings.ToLower(req.Method[1:]), URL: req.URL.String(), Err: err}
	}
	return resp, nil
}

// transportFailure classifies an error of the exchange: transient when the request was not
// written, maybe-sent when it was.
func (p *Provider) transportFailure(ctx context.Context, written bool, err error) engine.Outcome {
	code := CodeConnectFailed
	if written {
		code = CodeConnectionLost
	}
	var netErr net.Error
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		code = CodeTimeout
	case ctx.Err() != nil:
		code = CodeCancelled
	}
	if written {
		return p.outcome(engine.OutcomeMaybeSent, code, withoutURL(err))
	}
	return p.outcome(engine.OutcomeTransient, code, withoutURL(err))
}

// withoutURL is err's text without the request URL that net/http puts in a *url.Error: the
// URL may carry a credential (a bot token in the path of a baseUrl taken from the
// environment), and a reason is stored and logged. The method and the cause stay.
func withoutURL(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) && urlErr.Err != nil {
		return urlErr.Op + ": " + urlErr.Err.Error()
	}
	return err.Error()
}
