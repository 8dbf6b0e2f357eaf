package engine_test

import (
	"context"
	"log/slog"
	"slices"
	"testing"
	"time"

	"switchboard/engine"
	"switchboard/engine/enginetest"
)

// receiptSpy is the real store, keeping the receipts that reach it.
type receiptSpy struct {
	engine.Store
	got []engine.Receipt
}

func (s *receiptSpy) RecordReceipts(ctx context.Context, provider string, rs []engine.Receipt, now time.Time) (engine.ReceiptTally, error) {
	s.got = append(s.got, rs...)
	return s.Store.RecordReceipts(ctx, provider, rs, now)
}

// TestReceiptsDecideWhatReachesTheStore records one callback's receipts on a real store: those
// that can never move a report are tallied by the engine and never reach the store; the others
// are matched, applied forward only, or kept.
func TestReceiptsDecideWhatReachesTheStore(t *testing.T) {
	t.Parallel()
	p := enginetest.NewScriptedProvider("http", engine.Outcome{Class: engine.OutcomeAccepted, ProviderReference: "ref-1"})
	e := newDispatchEnv(t, p, nil)
	id := e.submit("sms-alone", "r", nil)
	e.due()
	spy := &receiptSpy{Store: e.store}
	rec, err := engine.NewReceipts(engine.ReceiptsConfig{Store: spy, Clock: e.clock, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	delivered := engine.Receipt{ProviderReference: "ref-1", Report: engine.ReportDelivered, Code: "DELIVRD"}
	early := engine.Receipt{ProviderReference: "ref-later", Report: engine.ReportSent}
	tally, err := rec.Record(context.Background(), "primary", []engine.Receipt{
		delivered,
		{ProviderReference: "", Report: engine.ReportDelivered},        // matches nothing
		{ProviderReference: "ref-1", Report: engine.ReportNone},        // moves nothing
		{ProviderReference: "ref-1", Report: engine.ReportUnavailable}, // moves nothing
		{ProviderReference: "ref-1", Report: engine.ReportSent},        // late: after delivered
		early, // kept for later
	})
	if err != nil {
		t.Fatal(err)
	}
	if tally != (engine.ReceiptTally{Applied: 1, Stale: 3, Unmatched: 2}) {
		t.Fatalf("tally %+v", tally)
	}
	if want := []engine.Receipt{delivered, {ProviderReference: "ref-1", Report: engine.ReportSent}, early}; !slices.Equal(spy.got, want) {
		t.Fatalf("the store was handed %+v, want %+v", spy.got, want)
	}
	if m := e.message(id); m.Report != engine.ReportDelivered || m.Status() != "delivered" {
		t.Fatalf("after the receipts: report %s, status %s", m.Report, m.Status())
	}
	if _, err := engine.NewReceipts(engine.ReceiptsConfig{Clock: e.clock}); err == nil {
		t.Fatal("receipts without a store")
	}
}
