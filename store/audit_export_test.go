package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"switchboard/engine/enginetest"
	"switchboard/store"
	"switchboard/store/storetest"
)

func TestExportAuditSinceInChainOrder(t *testing.T) {
	t.Parallel()
	clock := enginetest.NewFakeClock(storetest.Epoch())
	first := openTemp(t, clock)
	t0 := storetest.Epoch()
	for i := range 5 {
		mustAccept(t, first, fmt.Sprintf("m-%d", i), t0.Add(time.Duration(i)*time.Minute))
	}
	second := openAt(t, first.Path(), clock)
	mustAccept(t, second, "m-second", t0.Add(10*time.Minute))
	ctx := context.Background()
	var got []store.AuditRecord
	if err := first.ExportAudit(ctx, t0.Add(2*time.Minute), func(r store.AuditRecord) error {
		got = append(got, r)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("exported %d records since minute 2, want 3 of the first writer and 1 of the second", len(got))
	}
	byWriter := map[string][]store.AuditRecord{}
	for _, r := range got {
		if r.At.Before(t0.Add(2 * time.Minute)) {
			t.Fatalf("record before --since: %+v", r)
		}
		byWriter[r.Writer] = append(byWriter[r.Writer], r)
	}
	chain := byWriter[first.WriterID()]
	if len(chain) != 3 || chain[0].Seq != 3 || chain[0].MessageID != "m-2" || chain[0].Event != "message.accepted" {
		t.Fatalf("first writer's export = %+v", chain)
	}
	for i := 1; i < len(chain); i++ {
		if chain[i].Seq != chain[i-1].Seq+1 || !bytes.Equal(chain[i].PrevMAC, chain[i-1].MAC) || len(chain[i].MAC) != 32 {
			t.Fatalf("records %d and %d are not chained in order", chain[i-1].Seq, chain[i].Seq)
		}
	}
	if len(byWriter[second.WriterID()]) != 1 {
		t.Fatalf("second writer's export = %+v", byWriter[second.WriterID()])
	}
	if got[0].Writer > got[len(got)-1].Writer {
		t.Fatal("writers are not exported in writer order")
	}
	stop := errors.New("stop")
	n := 0
	if err := first.ExportAudit(ctx, time.Time{}, func(store.AuditRecord) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("export did not stop at the callback's error: %v after %d", err, n)
	}
	r, ok, err := first.AuditRecordAt(ctx, first.WriterID(), 4)
	if err != nil || !ok || r.MessageID != "m-3" || r.Seq != 4 {
		t.Fatalf("AuditRecordAt(4) = %+v, %v, %v", r, ok, err)
	}
	if _, ok, err := first.AuditRecordAt(ctx, first.WriterID(), 99); ok || err != nil {
		t.Fatalf("AuditRecordAt(99) = %v, %v", ok, err)
	}
}
