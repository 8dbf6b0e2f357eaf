package adaptertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"switchboard/engine"
	"switchboard/providers/httpgw"
)

// callback builds, signs (when asked), verifies and parses one callback.
func (a *adapter) callback(p *httpgw.Provider, sign signer, ev event, now time.Time, led *ledger) (callbackResult, string, error) {
	m, err := parseHTTPMessage(ev.input)
	if err != nil {
		return callbackResult{}, "", err
	}
	method, target, err := m.requestLine()
	if err != nil {
		return callbackResult{}, "", err
	}
	signIt := strings.EqualFold(m.header.Get(signDirective), "yes")
	m.header.Del(signDirective)
	r, err := http.NewRequest(method, "http://switchboard.invalid"+target, nil)
	if err != nil {
		return callbackResult{}, "", fmt.Errorf("request line: %w", err)
	}
	r.Header = m.header
	body := m.body
	if signIt {
		if body, err = sign.signCallback(r, body, ev.n, now); err != nil {
			return callbackResult{}, "", err
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	if err := p.VerifyCallback(r, routeToken(r.URL.Path), body); err != nil {
		return callbackResult{verified: false}, "the callback was not verified (the verifier's reason is logged only)", nil
	}
	cb, err := p.ParseCallback(context.Background(), r, body)
	switch {
	case err != nil:
		return callbackResult{verified: true, errCode: engine.CodeOf(err)}, engine.CodeOf(err) + ": " + err.Error(), nil
	case len(cb.Receipts) == 0 && len(cb.Inbound) == 0:
		return callbackResult{verified: true, ignored: true}, "", nil
	}
	res := callbackResult{verified: true, receipts: cb.Receipts, inbound: cb.Inbound}
	if len(cb.Receipts) > 0 {
		res.tally = led.receive(cb.Receipts)
	}
	return res, "", nil
}

// signCallback signs a callback as sign does (and returns the body to send); for path-token it
// adds the token to the route when the callback's path lacks it.
func (s signer) signCallback(r *http.Request, body []byte, n int, now time.Time) ([]byte, error) {
	body, err := s.sign(r, body, n, now)
	if err != nil {
		return nil, err
	}
	if s.cfg.Kind == httpgw.VerifierPathToken && routeToken(r.URL.Path) == "" {
		r.URL.Path = strings.TrimSuffix(r.URL.Path, "/") + "/" + s.cfg.Token
	}
	return body, nil
}

// routeToken is the {token} of /v1/provider-callbacks/{provider}/{token}, or "".
func routeToken(path string) string {
	rest, ok := strings.CutPrefix(path, "/v1/provider-callbacks/")
	if !ok {
		return ""
	}
	_, token, _ := strings.Cut(rest, "/")
	return token
}
