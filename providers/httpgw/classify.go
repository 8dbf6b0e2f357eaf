package httpgw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"switchboard/engine"
	"switchboard/engine/retryafter"
	"switchboard/scripting"
)

// interpretOutput is what interpret returns (docs/adapters.md), decoded strictly.
type interpretOutput struct {
	Outcome           string   `json:"outcome"`
	ProviderReference string   `json:"providerReference"`
	RetryAfter        *float64 `json:"retryAfter"`
	Code              string   `json:"code"`
	// DeviceUnregistered marks a permanent outcome whose device token is no longer valid.
	DeviceUnregistered bool `json:"deviceUnregistered"`
	// RenewCredential says the gateway refused the credential as stale (APNs'
	// ExpiredProviderToken): the provider renews it and sends once more.
	RenewCredential bool `json:"renewCredential"`
}

// classify turns a gateway answer into an outcome: with interpret when the adapter has it,
// else with the default table. See the package documentation for the failure cases. renew is
// interpret's renewCredential.
func (p *Provider) classify(ctx context.Context, ans *answer) (o engine.Outcome, renew bool) {
	if ans.tooLarge {
		return p.outcome(engine.OutcomeMaybeSent, CodeResponseTooLarge,
			fmt.Sprintf("status %d with an answer over %d bytes", ans.status, p.cfg.MaximumResponseBytes)), false
	}
	base := p.defaultClass(ans)
	if !p.hasInterpret {
		return base, false
	}
	var out interpretOutput
	ok, err := p.program.CallInto(ctx, "interpret", &out, p.responseInput(ans))
	if scripting.ClassOf(err) == scripting.ClassDeadline && ctx.Err() == nil {
		// interpret reads the answer and nothing else, so running it again is safe. A loaded
		// machine can stall a call past its deadline, and after a 2xx that failure would make
		// the send uncertain (unknown, held for an operator): give it one more run first.
		out = interpretOutput{}
		ok, err = p.program.CallInto(ctx, "interpret", &out, p.responseInput(ans))
	}
	if err == nil && ok {
		if o, err = p.fromInterpret(ans, &out); err == nil {
			p.observeScript(nil)
			return o, out.RenewCredential
		}
		err = &outputInvalid{entry: "interpret", reason: err.Error()}
	}
	if err == nil { // interpret returned null: the default table decides.
		p.observeScript(nil)
		return base, false
	}
	code := "script." + p.observeScript(err)
	if errors.Is(err, scripting.ErrClosed) {
		code = CodeClosed // Close raced with this send; the answer is not read
	}
	if ans.status >= 200 && ans.status < 300 {
		return p.outcome(engine.OutcomeMaybeSent, code, fmt.Sprintf("status %d: interpret: %v", ans.status, err)), false
	}
	base.Code, base.Reason = code, fmt.Sprintf("status %d: interpret: %v", ans.status, err)
	return base, false
}

// defaultClass is the default table (docs/adapters.md): 2xx accepted, 408/429/503 transient
// (honouring Retry-After), 500/502/504 maybe-sent, any other status permanent http.<status>.
func (p *Provider) defaultClass(ans *answer) engine.Outcome {
	if ans.status >= 200 && ans.status < 300 {
		return p.outcome(engine.OutcomeAccepted, "", "")
	}
	code := "http." + strconv.Itoa(ans.status)
	switch {
	case ans.status == http.StatusRequestTimeout, ans.status == http.StatusTooManyRequests, ans.status == http.StatusServiceUnavailable:
		o := p.outcome(engine.OutcomeTransient, code, "")
		o.RetryAfter = retryafter.Parse(ans.header.Get("Retry-After"), p.cfg.Clock.Now())
		return o
	case ans.status == http.StatusInternalServerError, ans.status == http.StatusBadGateway, ans.status == http.StatusGatewayTimeout:
		return p.outcome(engine.OutcomeMaybeSent, code, "")
	}
	return p.outcome(engine.OutcomePermanent, code, "")
}

// fromInterpret validates interpret's output. A transient outcome without retryAfter honours
// the Retry-After header; a non-accepted outcome without code gets http.<status>.
func (p *Provider) fromInterpret(ans *answer, out *interpretOutput) (engine.Outcome, error) {
	class, err := engine.CheckScriptOutcome(out.Outcome, out.Code)
	if err != nil {
		return engine.Outcome{}, err
	}
	if !validReference(out.ProviderReference) {
		return engine.Outcome{}, errors.New("providerReference must be at most 256 printable characters")
	}
	code := out.Code
	if code == "" && class != engine.OutcomeAccepted {
		code = "http." + strconv.Itoa(ans.status)
	}
	if out.DeviceUnregistered && class != engine.OutcomePermanent {
		return engine.Outcome{}, errors.New("deviceUnregistered belongs to a permanent outcome")
	}
	if out.RenewCredential && class == engine.OutcomeAccepted {
		return engine.Outcome{}, errors.New("renewCredential belongs to an outcome that is not accepted")
	}
	o := p.outcome(class, code, fmt.Sprintf("interpret: status %d", ans.status))
	o.ProviderReference = out.ProviderReference
	o.DeviceUnregistered = out.DeviceUnregistered
	switch {
	case out.RetryAfter != nil:
		if *out.RetryAfter < 0 || math.IsNaN(*out.RetryAfter) {
			return engine.Outcome{}, errors.New("retryAfter must be a number of seconds, not negative")
		}
		o.RetryAfter = retryafter.Seconds(*out.RetryAfter)
	case class == engine.OutcomeTransient:
		o.RetryAfter = retryafter.Parse(ans.header.Get("Retry-After"), p.cfg.Clock.Now())
	}
	return o, nil
}

// responseInput is the plain `response` argument of interpret: only declared headers, lower
// case; the body parsed from JSON when it is JSON, else a string.
func (p *Provider) responseInput(ans *answer) scripting.Object {
	headers := make(map[string]any, len(p.responseHeaders))
	for name, values := range ans.header {
		if lower := strings.ToLower(name); p.responseHeaders[lower] {
			headers[lower] = strings.Join(values, ", ")
		}
	}
	return scripting.Object{
		{Name: "body", Value: decodeBody(ans.header.Get("Content-Type"), ans.body)},
		{Name: "headers", Value: headers},
		{Name: "status", Value: ans.status},
	}
}

// decodeBody parses body as JSON when its media type is JSON (or absent and the body is JSON)
// and returns the string otherwise. Numbers stay json.Number so no precision is lost.
func decodeBody(contentType string, body []byte) any {
	if JSONMediaType(mediaType(contentType)) || (contentType == "" && json.Valid(body)) {
		if v, ok := parseJSON(body); ok {
			return v
		}
	}
	return string(body)
}

// JSONMediaType reports whether a media type (lower case, without parameters) is JSON:
// application/json, any +json type, and the AWS JSON protocols' application/x-amz-json-1.0 and
// -1.1. Answers, callbacks and golden cases use it alike.
func JSONMediaType(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json") ||
		mt == "application/x-amz-json-1.0" || mt == "application/x-amz-json-1.1"
}

// mediaType is the media type mime.ParseMediaType reads in a Content-Type ("" when it is
// malformed), without parsing the usual exact "application/json".
func mediaType(contentType string) string {
	if contentType == "application/json" {
		return contentType
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	return mt
}

// parseJSON decodes one JSON value into plain Go values with json.Number numbers. A body
// that is exactly one JSON value, the usual answer, is read by scripting.ParseJSON in one
// pass; anything else keeps the Decoder's rules (which also accept a value followed by a
// stray ']' or '}').
func parseJSON(body []byte) (any, bool) {
	if v, ok := scripting.ParseJSON(body); ok {
		return v, true
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return nil, false
	}
	return v, true
}

// validReference reports whether a provider reference is at most 256 bytes without control
// characters.
func validReference(ref string) bool {
	return len(ref) <= 256 && validHeaderValue(ref) && !strings.Contains(ref, "\t")
}
