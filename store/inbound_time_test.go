package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// TestInboundBefore1970: a gateway's receivedAt before 1970 is refused, naming the member, and
// stores nothing; one stored before that refusal existed (a negative ts_ms) reads back as no
// time given, never as a wrapped unsigned count.
func TestInboundBefore1970(t *testing.T) {
	t.Parallel()
	s := openInternal(t)
	ctx := context.Background()
	item := engine.InboundItem{From: "+447700900123", To: "+15550100", Text: "YES", ProviderReference: "gw-in-1",
		ReceivedAt: time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)}
	_, err := s.PutInbound(ctx, "sms-gateway", engine.ChannelSMS, []engine.InboundItem{item})
	var p *engine.Problem
	if !errors.As(err, &p) || p.Code != engine.CodeCallbackUnreadable || !strings.Contains(p.Detail, "receivedAt") {
		t.Fatalf("PutInbound of a 1969 receivedAt = %v, want callback.unreadable naming receivedAt", err)
	}
	if entries, _, err := s.ListInbox(ctx, "", 10); err != nil || len(entries) != 0 {
		t.Fatalf("the refused item was stored: %+v %v", entries, err)
	}

	item.ReceivedAt = time.Unix(0, 0)
	if _, err := s.PutInbound(ctx, "sms-gateway", engine.ChannelSMS, []engine.InboundItem{item}); err != nil {
		t.Fatalf("PutInbound at the epoch: %v", err)
	}
	if err := s.submit(ctx, rawWrite("UPDATE peer_inbox SET ts_ms = -1000")); err != nil {
		t.Fatal(err)
	}
	entries, _, err := s.ListInbox(ctx, "", 10)
	if err != nil || len(entries) != 1 {
		t.Fatalf("list: %+v %v", entries, err)
	}
	if entries[0].TsMs != 0 {
		t.Fatalf("a stored gateway time of -1000 ms reads back as tsMs %d, want 0", entries[0].TsMs)
	}
}

// rawWrite is a statement run by the writer, as the store's own ops run theirs.
type rawWrite string

func (q rawWrite) apply(b *batch) error {
	_, err := b.execN(string(q))
	return err
}
