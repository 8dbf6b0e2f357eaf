package httpgw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"switchboard/engine"
	"switchboard/scripting"
)

// callbackOutput is what the adapter's callback function returns, decoded strictly:
// {receipts?: [...], inbound?: [...]} (docs/adapters.md).
type callbackOutput struct {
	Receipts []receiptOutput `json:"receipts"`
	Inbound  []inboundOutput `json:"inbound"`
}

// inboundOutput is one inbound item as the script returns it.
type inboundOutput struct {
	From              string  `json:"from"`
	To                string  `json:"to"`
	Text              string  `json:"text"`
	ProviderReference string  `json:"providerReference"`
	ReceivedAt        *string `json:"receivedAt"`
}

// maxInboundPerCallback bounds the inbound items of one callback.
const maxInboundPerCallback = 1000

// InboundChannel is the channel of the inbound messages this gateway posts.
func (p *Provider) InboundChannel() engine.Channel {
	if p.cfg.InboundChannel == "" {
		return engine.ChannelSMS
	}
	return p.cfg.InboundChannel
}

// ParseCallback runs the adapter's callback function over a verified callback, or, for an
// adapter that defines only receipt, ParseReceipts. callback receives the same request as
// receipt and returns {receipts, inbound} (either may be absent or empty) or null to ignore
// the request. Every item is checked (a receipt as receipt's are; an inbound item with
// engine.CheckInbound, receivedAt RFC 3339 when given): one bad item makes the whole callback
// unreadable, so that the gateway posts it again rather than lose part of it. Failures are
// classed as ParseReceipts classes them.
func (p *Provider) ParseCallback(ctx context.Context, r *http.Request, body []byte) (engine.Callback, error) {
	if !p.program.Has("callback") {
		receipts, err := p.ParseReceipts(ctx, r, body)
		return engine.Callback{Receipts: receipts}, err
	}
	raw, err := p.program.Call(ctx, "callback", callbackInput(r, body))
	p.observeScript(err)
	if err != nil && (scripting.ClassOf(err) == scripting.ClassDeadline || errors.Is(err, scripting.ErrClosed)) {
		p.cfg.Observer(EventCallback, "deferred")
		return engine.Callback{}, fmt.Errorf("httpgw %s: callback: %w (%v)", p.cfg.ID, engine.ErrServiceUnavailable, err)
	}
	if err == nil {
		var cb engine.Callback
		if cb, err = decodeCallback(p.program, raw); err == nil {
			if len(cb.Receipts)+len(cb.Inbound) == 0 {
				p.cfg.Observer(EventCallback, "ignored")
				return engine.Callback{}, nil
			}
			p.cfg.Observer(EventCallback, "parsed")
			return cb, nil
		}
	}
	p.cfg.Observer(EventCallback, "unreadable")
	var named *engine.Problem
	if errors.As(err, &named) && named.Code == engine.CodeCallbackUnreadable {
		// An item the inbox cannot keep: the problem says which member.
		return engine.Callback{}, fmt.Errorf("httpgw %s: callback: %w", p.cfg.ID, named)
	}
	return engine.Callback{}, fmt.Errorf("httpgw %s: callback: %w (%v)", p.cfg.ID, engine.ErrCallbackUnreadable, err)
}

// decodeCallback decodes and checks callback's JSON result.
func decodeCallback(program *scripting.Program, raw json.RawMessage) (engine.Callback, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return engine.Callback{}, nil
	}
	if raw[0] != '{' {
		return engine.Callback{}, errors.New("callback must return {receipts, inbound} or null")
	}
	var out callbackOutput
	if err := program.Decode(raw, &out); err != nil {
		return engine.Callback{}, fmt.Errorf("callback output: %w", err)
	}
	receipts, err := checkReceipts(out.Receipts)
	if err != nil {
		return engine.Callback{}, err
	}
	if len(out.Inbound) > maxInboundPerCallback {
		return engine.Callback{}, fmt.Errorf("callback output: more than %d inbound items", maxInboundPerCallback)
	}
	inbound := make([]engine.InboundItem, 0, len(out.Inbound))
	for i, o := range out.Inbound {
		it := engine.InboundItem{From: o.From, To: o.To, Text: o.Text, ProviderReference: o.ProviderReference}
		if o.ReceivedAt != nil {
			t, err := time.Parse(time.RFC3339Nano, *o.ReceivedAt)
			if err != nil {
				return engine.Callback{}, engine.NewProblem(engine.CodeCallbackUnreadable, fmt.Sprintf("inbound item %d: receivedAt must be an RFC 3339 time", i))
			}
			it.ReceivedAt = t
		}
		if err := engine.CheckInbound(it); err != nil {
			// The reason names the member and holds no value: the gateway may read it.
			return engine.Callback{}, engine.NewProblem(engine.CodeCallbackUnreadable, fmt.Sprintf("inbound item %d: %v", i, err))
		}
		inbound = append(inbound, it)
	}
	return engine.Callback{Receipts: receipts, Inbound: inbound}, nil
}
