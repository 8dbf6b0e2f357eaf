package httpgw

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"switchboard/engine"
)

// TestParseCallbackInbound: the quickstart adapter's (the one the dev stack's mock gateway talks to) callback returns inbound items as they are
// posted; every bad item (no reference, no sender, an address over 256 characters, a text over
// 64 KiB, a receivedAt that is not RFC 3339) makes the callback unreadable, whatever else it held.
func TestParseCallbackInbound(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", "providers", "sms-gateway", "adapter.js"))
	if err != nil {
		t.Fatal(err)
	}
	p := receiptProvider(t, string(src))
	parse := func(body string) (engine.Callback, error) {
		return p.ParseCallback(context.Background(), callbackRequest("/cb", "application/json", []byte(body)), []byte(body))
	}
	cb, err := parse(`{"type":"inbound","id":"gw-in-1","from":"+447700900123","to":"+15550100","text":"YES","receivedAt":"2026-03-02T09:00:02Z"}`)
	want := engine.InboundItem{From: "+447700900123", To: "+15550100", Text: "YES", ProviderReference: "gw-in-1",
		ReceivedAt: time.Date(2026, 3, 2, 9, 0, 2, 0, time.UTC)}
	if err != nil || len(cb.Receipts) != 0 || len(cb.Inbound) != 1 || cb.Inbound[0] != want {
		t.Fatalf("ParseCallback = %+v, %v; want %+v", cb, err, want)
	}
	if cb, err := parse(`{"id":"gw-1","status":"delivered"}`); err != nil || len(cb.Receipts) != 1 || len(cb.Inbound) != 0 {
		t.Fatalf("a receipt through callback = %+v, %v", cb, err)
	}
	if cb, err := parse(`[]`); err != nil || len(cb.Receipts)+len(cb.Inbound) != 0 {
		t.Fatalf("nothing to read = %+v, %v", cb, err)
	}
	long := strings.Repeat("x", 257)
	for name, body := range map[string]string{
		"no reference":     `{"type":"inbound","id":"","from":"+1555","text":"hi"}`,
		"no sender":        `{"type":"inbound","id":"gw-in-2","from":"","text":"hi"}`,
		"sender too long":  `{"type":"inbound","id":"gw-in-2","from":"` + long + `","text":"hi"}`,
		"to too long":      `{"type":"inbound","id":"gw-in-2","from":"+1555","to":"` + long + `","text":"hi"}`,
		"text over 64 KiB": `{"type":"inbound","id":"gw-in-2","from":"+1555","text":"` + strings.Repeat("y", 64<<10+1) + `"}`,
		"receivedAt":       `{"type":"inbound","id":"gw-in-2","from":"+1555","text":"hi","receivedAt":"yesterday"}`,
		"missing text":     `{"type":"inbound","id":"gw-in-2","from":"+1555"}`,
	} {
		if _, err := parse(body); !errors.Is(err, engine.ErrCallbackUnreadable) {
			t.Errorf("%s: ParseCallback = %v, want callback.unreadable", name, err)
		}
	}
	// A time before 1970 is refused by a problem that names the member (the gateway reads it).
	_, err = parse(`{"type":"inbound","id":"gw-in-2","from":"+1555","text":"hi","receivedAt":"1969-12-31T23:59:59Z"}`)
	var named *engine.Problem
	if !errors.As(err, &named) || named.Code != engine.CodeCallbackUnreadable || !strings.Contains(named.Detail, "receivedAt") {
		t.Errorf("a 1969 receivedAt: ParseCallback = %v, want callback.unreadable naming receivedAt", err)
	}
	if cb, err := parse(`{"type":"inbound","id":"gw-in-2","from":"+1555","text":"hi","receivedAt":"1970-01-01T00:00:00Z"}`); err != nil || len(cb.Inbound) != 1 {
		t.Errorf("a receivedAt at the epoch = %v", err)
	}
	// A text of exactly 64 KiB is taken.
	if cb, err := parse(`{"type":"inbound","id":"gw-in-3","from":"+1555","text":"` + strings.Repeat("z", 64<<10) + `"}`); err != nil || len(cb.Inbound) != 1 {
		t.Fatalf("a 64 KiB text = %v", err)
	}
}
