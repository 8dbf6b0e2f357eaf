package storetest

import (
	"testing"
	"time"

	"switchboard/engine"
)

func receiptTests() []namedTest {
	return []namedTest{
		{"ForwardOnly", testReceiptsForward},
		{"UnmatchedKeptUntilFinish", testReceiptsUnmatched},
		{"MatchedByProviderAndReference", testReceiptsProvider},
		{"RefusesWhatTheEngineWouldNotAdmit", testReceiptsRefused},
	}
}

// submitted accepts, claims and finishes a message as submitted with reference ref.
func (b *bundle) submitted(id, ref string) {
	b.t.Helper()
	b.accept(id)
	b.clock.Advance(time.Second)
	b.mustFinish(b.claimOne(id), engine.AttemptAccepted, engine.DispatchSubmitted, engine.ReportNone, ref)
}

func (b *bundle) receipts(provider string, rs ...engine.Receipt) engine.ReceiptTally {
	b.t.Helper()
	tally, err := b.store.RecordReceipts(b.ctx, provider, rs, b.clock.Advance(time.Second))
	if err != nil {
		b.t.Fatalf("RecordReceipts: %v", err)
	}
	return tally
}

func testReceiptsForward(t *testing.T, b *bundle) {
	b.submitted("m-1", "ref-1")
	r := func(rep engine.Report) engine.Receipt {
		return engine.Receipt{ProviderReference: "ref-1", Report: rep, Code: "c-" + string(rep)}
	}
	if got := b.receipts("sms-gateway", r(engine.ReportSent)); got != (engine.ReceiptTally{Applied: 1}) {
		t.Fatalf("sent: %+v", got)
	}
	deliveredAt := b.clock.Now().Add(time.Second)
	if got := b.receipts("sms-gateway", r(engine.ReportDelivered), r(engine.ReportDelivered)); got != (engine.ReceiptTally{Applied: 1, Stale: 1}) {
		t.Fatalf("delivered twice: %+v", got)
	}
	if got := b.receipts("sms-gateway", r(engine.ReportSent), r(engine.ReportUndelivered)); got != (engine.ReceiptTally{Stale: 2}) {
		t.Fatalf("late and out of order: %+v", got)
	}
	m := b.message("m-1")
	if m.Report != engine.ReportDelivered || m.Status() != "delivered" || m.ReportedAt == nil || !m.ReportedAt.Equal(deliveredAt) {
		t.Fatalf("after receipts: report %s, status %s, reportedAt %v", m.Report, m.Status(), m.ReportedAt)
	}
}

func testReceiptsUnmatched(t *testing.T, b *bundle) {
	// Both arrive before the send's answer is recorded, and out of order.
	got := b.receipts("sms-gateway",
		engine.Receipt{ProviderReference: "ref-early", Report: engine.ReportDelivered},
		engine.Receipt{ProviderReference: "ref-early", Report: engine.ReportSent})
	if got != (engine.ReceiptTally{Unmatched: 2}) {
		t.Fatalf("early receipts: %+v", got)
	}
	b.submitted("m-1", "ref-early")
	if m := b.message("m-1"); m.Report != engine.ReportDelivered || m.ReportedAt == nil {
		t.Fatalf("kept receipts not applied at Finish: report %s", m.Report)
	}
	// Kept receipts are applied once: another message with that reference does not get them.
	b.submitted("m-2", "ref-early")
	if m := b.message("m-2"); m.Report != engine.ReportNone {
		t.Fatalf("kept receipts applied twice: m-2 report %s", m.Report)
	}
}

func testReceiptsProvider(t *testing.T, b *bundle) {
	b.submitted("m-1", "ref-1")
	if got := b.receipts("another-gateway", engine.Receipt{ProviderReference: "ref-1", Report: engine.ReportDelivered}); got != (engine.ReceiptTally{Unmatched: 1}) {
		t.Fatalf("receipt of another provider: %+v", got)
	}
	if m := b.message("m-1"); m.Report != engine.ReportNone {
		t.Fatalf("another provider's receipt moved the report to %s", m.Report)
	}
}

// testReceiptsRefused hands the store receipts that engine.Receipts never passes on (no
// reference, or a report no step leads to): the whole batch is refused and nothing changes.
func testReceiptsRefused(t *testing.T, b *bundle) {
	b.submitted("m-1", "ref-1")
	before := b.auditRecords()
	for _, bad := range []engine.Receipt{
		{ProviderReference: "", Report: engine.ReportDelivered},
		{ProviderReference: "ref-1", Report: engine.ReportNone},
		{ProviderReference: "ref-1", Report: engine.ReportUnavailable},
		{ProviderReference: "ref-1", Report: "read"},
	} {
		batch := []engine.Receipt{{ProviderReference: "ref-1", Report: engine.ReportDelivered}, bad}
		if tally, err := b.store.RecordReceipts(b.ctx, "sms-gateway", batch, b.clock.Now()); err == nil {
			t.Fatalf("RecordReceipts with %+v = %+v, want an error", bad, tally)
		}
	}
	if m := b.message("m-1"); m.Report != engine.ReportNone {
		t.Fatalf("a refused batch moved the report to %s", m.Report)
	}
	if after := b.auditRecords(); after != before {
		t.Fatalf("a refused batch was journaled: %d records, then %d", before, after)
	}
}
