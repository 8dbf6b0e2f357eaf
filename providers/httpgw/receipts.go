package httpgw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"switchboard/engine"
	"switchboard/scripting"
)

// receiptOutput is one receipt returned by the adapter's receipt function, decoded strictly.
type receiptOutput struct {
	ProviderReference string `json:"providerReference"`
	Report            string `json:"report"`
	Code              string `json:"code"`
}

// maxReceiptsPerCallback bounds one batched callback.
const maxReceiptsPerCallback = 1000

// VerifyCallback checks the callback with the configured verifier. Every failure returns
// exactly engine.ErrCallbackUnverified, so nothing about the reason reaches the caller; the
// reason is logged at info level.
func (p *Provider) VerifyCallback(r *http.Request, token string, body []byte) error {
	if err := p.verifier.Verify(r, token, body); err != nil {
		p.cfg.Logger.Info("callback unverified", "reason", err.Error())
		p.cfg.Observer(EventCallback, "unverified")
		return engine.ErrCallbackUnverified
	}
	return nil
}

// ParseReceipts runs the adapter's receipt function over a verified callback (for an adapter
// that defines callback instead, the receipts callback returns: see ParseCallback). The function
// receives {method, query, form, json, body}: query and form map each name to its first value,
// form is set when the body is form-encoded and json when it is JSON (else both are null), and
// body is the raw body as a string. It may return one {providerReference, report, code?}, an
// array of them, or null (ignore the callback: nil, nil). A script failure, a report other than
// sent, delivered or undelivered, or any other shape returns an error wrapping
// engine.ErrCallbackUnreadable; a script that ran out of time, or a provider closing, returns one
// wrapping engine.ErrServiceUnavailable (503: the gateway posts the callback again).
func (p *Provider) ParseReceipts(ctx context.Context, r *http.Request, body []byte) ([]engine.Receipt, error) {
	if !p.program.Has("receipt") && p.program.Has("callback") {
		// An adapter with callback only: its receipts (inbound items need ParseCallback).
		cb, err := p.ParseCallback(ctx, r, body)
		return cb.Receipts, err
	}
	if !p.program.Has("receipt") {
		p.cfg.Observer(EventCallback, "unreadable")
		return nil, fmt.Errorf("httpgw %s: adapter has no receipt function: %w", p.cfg.ID, engine.ErrCallbackUnreadable)
	}
	raw, err := p.program.Call(ctx, "receipt", callbackInput(r, body))
	p.observeScript(err)
	if err != nil && (scripting.ClassOf(err) == scripting.ClassDeadline || errors.Is(err, scripting.ErrClosed)) {
		// Out of time (the script's deadline, or the request's) or shutting down: the
		// callback is not unreadable, it was not read. 503 makes the gateway post it again.
		p.cfg.Observer(EventCallback, "deferred")
		return nil, fmt.Errorf("httpgw %s: receipt: %w (%v)", p.cfg.ID, engine.ErrServiceUnavailable, err)
	}
	if err != nil {
		p.cfg.Observer(EventCallback, "unreadable")
		return nil, fmt.Errorf("httpgw %s: receipt: %w (%v)", p.cfg.ID, engine.ErrCallbackUnreadable, err)
	}
	receipts, err := decodeReceipts(p.program, raw)
	if err != nil {
		p.cfg.Observer(EventCallback, "unreadable")
		return nil, fmt.Errorf("httpgw %s: receipt: %w (%v)", p.cfg.ID, engine.ErrCallbackUnreadable, err)
	}
	if len(receipts) == 0 {
		p.cfg.Observer(EventCallback, "ignored")
		return nil, nil
	}
	p.cfg.Observer(EventCallback, "parsed")
	return receipts, nil
}

// callbackInput is the plain `request` argument of receipt.
func callbackInput(r *http.Request, body []byte) scripting.Object {
	var form, parsed any
	mt := mediaType(r.Header.Get("Content-Type"))
	switch {
	case mt == "application/x-www-form-urlencoded":
		if values, err := url.ParseQuery(string(body)); err == nil {
			form = firstValues(values)
		}
	case JSONMediaType(mt) || mt == "" && json.Valid(body):
		if v, ok := parseJSON(body); ok {
			parsed = v
		}
	}
	return scripting.Object{
		{Name: "body", Value: string(body)},
		{Name: "form", Value: form},
		{Name: "json", Value: parsed},
		{Name: "method", Value: r.Method},
		{Name: "query", Value: firstValues(r.URL.Query())},
	}
}

// firstValues maps each name to its first value.
func firstValues(values url.Values) map[string]any {
	out := make(map[string]any, len(values))
	for name, vals := range values {
		if len(vals) > 0 {
			out[name] = vals[0]
		}
	}
	return out
}

// decodeReceipts decodes receipt's JSON result, strictly as CallInto would (program.Decode):
// null, one object or an array of objects.
func decodeReceipts(program *scripting.Program, raw json.RawMessage) ([]engine.Receipt, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var outs []receiptOutput
	var err error
	switch raw[0] {
	case '[':
		err = program.Decode(raw, &outs)
	case '{':
		outs = make([]receiptOutput, 1)
		err = program.Decode(raw, &outs[0])
	default:
		return nil, errors.New("receipt must return an object, an array of objects or null")
	}
	if err != nil {
		return nil, fmt.Errorf("receipt output: %w", err)
	}
	return checkReceipts(outs)
}

// checkReceipts validates decoded receipts and converts them.
func checkReceipts(outs []receiptOutput) ([]engine.Receipt, error) {
	if len(outs) > maxReceiptsPerCallback {
		return nil, fmt.Errorf("receipt output: more than %d receipts", maxReceiptsPerCallback)
	}
	receipts := make([]engine.Receipt, 0, len(outs))
	for i, out := range outs {
		report := engine.Report(out.Report)
		switch report {
		case engine.ReportSent, engine.ReportDelivered, engine.ReportUndelivered:
		default:
			return nil, fmt.Errorf("receipt %d: report %q is not sent, delivered or undelivered", i, out.Report)
		}
		if out.ProviderReference == "" || !validReference(out.ProviderReference) {
			return nil, fmt.Errorf("receipt %d: providerReference is empty or malformed", i)
		}
		if out.Code != "" && !engine.ValidOutcomeCode(out.Code) {
			return nil, fmt.Errorf("receipt %d: code must be 1-64 characters of [A-Za-z0-9._:-]", i)
		}
		receipts = append(receipts, engine.Receipt{ProviderReference: out.ProviderReference, Report: report, Code: out.Code})
	}
	return receipts, nil
}
