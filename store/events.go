package store

import (
	"encoding/json"
	"fmt"
	"slices"

	"switchboard/engine"
)

// The event outbox's write side (docs/design/001-event-outbox.md). Every write path that changes
// a message's status, dispatch or report adds one to the message's event_seq in the statement of
// the change, and marks the message changed on its batch (batch.messageChanged); a stored inbox
// entry is marked likewise (batch.inboxStored). Just before the batch commits, flushEvents upserts
// one outbox row per subscribed endpoint and changed subject, so the rows commit or roll back
// with the changes they report. A batch that changed nothing subscribed runs no statement; a
// store without subscriptions marks nothing at all.
//
// Several changes of one message in one batch make one upsert with the message's latest
// sequence, and a row still undelivered takes the newest sequence in place of the older one
// (superseding): the payload is built when the event is sent, from the message as it then stands.

// eventChunk bounds the ids of one upsert statement (the IN list is padded to a power of two,
// so statements keep a few texts).
const eventChunk = 256

// eventMark is where a unit began in the batch's event marks, to undo a failed unit's.
type eventMark struct{ messages, inbox, devices int }

// inboxEvent is a stored inbox entry to report.
type inboxEvent struct{ id, provider string }

// messageEvents reports whether some endpoint takes message.status events.
func (s *Store) messageEvents() bool { return len(s.msgSubs) > 0 }

// messageChanged marks messages as changed by this batch; call it once their change is written.
func (b *batch) messageChanged(ids ...string) {
	if b.s.messageEvents() {
		b.changed = append(b.changed, ids...)
	}
}

// inboxStored marks a stored inbox entry, received by provider.
func (b *batch) inboxStored(id, provider string) {
	for _, sub := range b.s.cfg.Subscriptions {
		if sub.Reads(provider) {
			b.inboxEvents = append(b.inboxEvents, inboxEvent{id: id, provider: provider})
			return
		}
	}
}

// deviceUnregistered marks a device.unregistered event to write with the batch.
func (b *batch) deviceUnregistered(ev *engine.DeviceUnregistered) {
	if ev != nil && len(b.s.deviceSubs) > 0 {
		b.deviceEvents = append(b.deviceEvents, ev)
	}
}

// eventMark returns where the batch's marks stand, for a unit that may fail.
func (b *batch) eventMark() eventMark {
	return eventMark{len(b.changed), len(b.inboxEvents), len(b.deviceEvents)}
}

// undoEvents drops the marks made after m (a failed unit changed nothing).
func (b *batch) undoEvents(m eventMark) {
	b.changed = b.changed[:m.messages]
	b.inboxEvents = b.inboxEvents[:m.inbox]
	b.deviceEvents = b.deviceEvents[:m.devices]
}

// flushEvents writes the outbox rows of what the batch changed. It runs last before the commit.
func (b *batch) flushEvents() error {
	if len(b.changed) == 0 && len(b.inboxEvents) == 0 && len(b.deviceEvents) == 0 {
		return nil
	}
	now := ms(b.now)
	if len(b.changed) > 0 {
		ids := slices.Clone(b.changed)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		for _, sub := range b.s.msgSubs {
			for start := 0; start < len(ids); start += eventChunk {
				chunk := ids[start:min(start+eventChunk, len(ids))]
				if _, err := b.execIn(b.s.q.events.upsertMessages, sub.Endpoint, now, now, chunk, sub.MessageProfiles); err != nil {
					return fmt.Errorf("store: write message events of %s: %w", sub.Endpoint, err)
				}
			}
		}
	}
	for _, e := range b.inboxEvents {
		for _, sub := range b.s.cfg.Subscriptions {
			if !sub.Reads(e.provider) {
				continue
			}
			if err := b.execCached(b.s.q.events.insertInbox, sub.Endpoint, e.id, now, now); err != nil {
				return fmt.Errorf("store: write inbox event of %s: %w", sub.Endpoint, err)
			}
		}
	}
	if err := b.flushDeviceEvents(now); err != nil {
		return err
	}
	b.wroteEvents = true
	return nil
}

// flushDeviceEvents writes a row per device.unregistered event and endpoint subscribed to the
// message's access profile, with the event's data.
func (b *batch) flushDeviceEvents(now int64) error {
	for _, ev := range b.deviceEvents {
		data, err := json.Marshal(ev)
		if err != nil {
			return fmt.Errorf("store: encode a device.unregistered event: %w", err)
		}
		for _, sub := range b.s.deviceSubs {
			if _, err := b.execIn(b.s.q.events.upsertDevice, sub.Endpoint, now, now, string(data),
				[]string{ev.MessageID}, sub.DeviceProfiles); err != nil {
				return fmt.Errorf("store: write the device.unregistered event of %s: %w", sub.Endpoint, err)
			}
		}
	}
	return nil
}

// subscriptionsFor are the subscriptions whose profiles (MessageProfiles for message.status,
// DeviceProfiles for device.unregistered) are not empty.
func subscriptionsFor(subs []engine.Subscription, profiles func(engine.Subscription) []string) []engine.Subscription {
	var out []engine.Subscription
	for _, s := range subs {
		if len(profiles(s)) > 0 {
			out = append(out, s)
		}
	}
	return out
}
