package httpgw

import (
	"context"
	"net/http"

	"switchboard/engine"
)

// PreparedRequest is the request prepare built for a message, validated as Send validates it
// and before the credential is added: what `switchboard adapter run` shows.
type PreparedRequest struct {
	Method string
	// URL is the target resolved under the baseUrl.
	URL    string
	Header http.Header
	Body   []byte
}

// Prepare runs the adapter's prepare for out and validates its output exactly as Send does,
// without sending anything. A refused output returns the outcome Send would have returned
// (its Reason names the script's line and column for a script failure).
func (p *Provider) Prepare(ctx context.Context, out *engine.Outbound) (*PreparedRequest, *engine.Outcome) {
	req, refused := p.prepare(ctx, out)
	if refused != nil {
		return nil, refused
	}
	return &PreparedRequest{Method: p.cfg.Method, URL: req.url, Header: req.header.Clone(), Body: append([]byte(nil), req.body...)}, nil
}
