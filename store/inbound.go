package store

import (
	"context"
	"fmt"

	"switchboard/engine"
)

// PutInbound stores inbound items a gateway posted (docs/adapters.md) in one writer request, as
// one unit: every item is checked first (engine.CheckInbound; a bad one refuses them all and
// stores nothing), then each is stored once per (provider, ProviderReference). A new item becomes
// an inbox entry of channel: from the sender's address, to the gateway's, messageId the provider
// reference, payload the text, tsMs the gateway's receivedAt (0 when it gave none), receivedAt the
// store's clock; with its record in gateway_inbound, an audit record "inbox.received" by
// "provider:<id>", and its inbox.received events. A repeat (also one racing it in the same call)
// stores nothing and answers Duplicate with the first entry's id.
func (s *Store) PutInbound(ctx context.Context, provider string, channel engine.Channel, items []engine.InboundItem) ([]engine.InboxResult, error) {
	if provider == "" {
		return nil, fmt.Errorf("store: put inbound: the provider is empty")
	}
	for i, it := range items {
		if err := engine.CheckInbound(it); err != nil {
			return nil, engine.NewProblem(engine.CodeCallbackUnreadable, fmt.Sprintf("inbound item %d: %v", i, err))
		}
	}
	if len(items) == 0 {
		return nil, nil
	}
	o := &inboundOp{provider: provider, channel: channel, items: items}
	if err := s.submit(ctx, o); err != nil {
		return nil, fmt.Errorf("store: put inbound of %s: %w", provider, err)
	}
	return o.results, nil
}

// inboundOp is one PutInbound on its way through the writer.
type inboundOp struct {
	provider string
	channel  engine.Channel
	items    []engine.InboundItem
	results  []engine.InboxResult
}

func (o *inboundOp) apply(b *batch) error {
	o.results = nil
	return b.unit(func() error {
		res := make([]engine.InboxResult, len(o.items))
		for i := range o.items {
			r, err := o.put(b, &o.items[i])
			if err != nil {
				return err
			}
			res[i] = r
		}
		o.results = res
		return nil
	})
}

// put stores one item, or resolves a repeat.
func (o *inboundOp) put(b *batch, it *engine.InboundItem) (engine.InboxResult, error) {
	q := &b.s.q.inbox
	id, err := newInboxID(b)
	if err != nil {
		return engine.InboxResult{}, fmt.Errorf("store: put inbound: new id: %w", err)
	}
	now := ms(b.now)
	n, err := b.execN(q.inboundInsert, o.provider, it.ProviderReference, id, now)
	if err != nil {
		return engine.InboxResult{}, fmt.Errorf("store: put inbound: record: %w", err)
	}
	if n == 0 {
		var first string
		if err := b.get(&first, q.inboundSelect, o.provider, it.ProviderReference); err != nil {
			return engine.InboxResult{}, fmt.Errorf("store: put inbound: read record: %w", err)
		}
		return engine.InboxResult{Duplicate: true, InboxID: first}, nil
	}
	var ts int64
	if !it.ReceivedAt.IsZero() {
		ts = ms(it.ReceivedAt)
	}
	text := []byte(it.Text)
	if err := b.execCached(q.entry, id, it.From, "", it.ProviderReference, ts, now, len(text), text,
		string(o.channel), o.provider, it.To); err != nil {
		return engine.InboxResult{}, fmt.Errorf("store: put inbound entry %s: %w", id, err)
	}
	if err := b.audit(engine.AuditEntry{Event: "inbox.received", Actor: "provider:" + o.provider,
		MessageID: id, Outcome: string(o.channel), At: b.now}); err != nil {
		return engine.InboxResult{}, fmt.Errorf("store: put inbound entry %s: %w", id, err)
	}
	b.inboxStored(id, o.provider)
	return engine.InboxResult{InboxID: id}, nil
}

var _ engine.GatewayInbox = (*Store)(nil)
