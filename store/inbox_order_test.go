package store_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
)

// TestInboxIDsFollowCommitOrder: entries without an id get one from the writer, so ids sort as
// the entries commit, and a reader paging by id sees every entry committed after its cursor.
func TestInboxIDsFollowCommitOrder(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s := openTemp(t, clock)
	ack := func(id string) []byte { return []byte(`{"accepted":true,"inboxId":"` + id + `"}`) }
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := s.PutInbox(context.Background(), engine.InboxEntry{From: "12D3KooWpeer", Protocol: "/p/1",
				MessageID: fmt.Sprint("m-", i), Payload: []byte("x"), Respond: ack})
			if err != nil || res.InboxID == "" || string(res.Response) != string(ack(res.InboxID)) {
				t.Errorf("put %d: %+v %v", i, res, err)
			}
		}()
	}
	wg.Wait()
	entries, _, err := s.ListInbox(context.Background(), "", 100)
	if err != nil || len(entries) != 40 {
		t.Fatalf("list: %d entries, %v", len(entries), err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.ID)
	}
	dup, err := s.PutInbox(context.Background(), engine.InboxEntry{From: "12D3KooWpeer", Protocol: "/p/1",
		MessageID: "m-3", Payload: []byte("x"), Respond: ack})
	if err != nil || !dup.Duplicate || string(dup.Response) != string(ack(dup.InboxID)) {
		t.Fatalf("duplicate: %+v %v", dup, err)
	}
	later, err := s.PutInbox(context.Background(), engine.InboxEntry{From: "12D3KooWpeer", Protocol: "/p/1",
		MessageID: "m-last", Payload: []byte("x"), Respond: ack})
	if err != nil || later.InboxID <= ids[len(ids)-1] {
		t.Fatalf("an entry committed later sorts before the last one read: %s <= %s", later.InboxID, ids[len(ids)-1])
	}
	next, _, err := s.ListInbox(context.Background(), ids[len(ids)-1], 10)
	if err != nil || len(next) != 1 || next[0].ID != later.InboxID {
		t.Fatalf("paging after the cursor: %+v %v", next, err)
	}
}
