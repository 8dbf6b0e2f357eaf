package adaptertest

import "switchboard/engine"

// ledger is what a store would hold for the case's one message, as far as receipts go. It
// follows engine.Receipts.Record and the store it records through: a receipt matches when its provider reference equals the
// one the accepted attempt recorded, byte for byte (an adapter must normalise references the
// same way in interpret and receipt); a matched receipt moves the report only forward; a
// receipt for a reference not known yet is kept and applied when an attempt records it.
type ledger struct {
	reference string
	report    engine.Report
	code      string
	kept      []engine.Receipt
}

// tally counts what one batch of receipts did.
type tally struct {
	applied, stale, unmatched int
}

func newLedger() *ledger { return &ledger{report: engine.ReportNone} }

// recordOutcome records a send's outcome: an accepted one sets the reference and the report
// known at send time, then applies the kept receipts that carry that reference.
func (l *ledger) recordOutcome(o engine.Outcome) {
	if o.Class != engine.OutcomeAccepted {
		return
	}
	l.reference = o.ProviderReference
	if o.Report != "" {
		l.report = o.Report
	}
	if l.reference == "" {
		return
	}
	var still []engine.Receipt
	for _, r := range l.kept {
		if r.ProviderReference == l.reference {
			l.apply(r)
			continue
		}
		still = append(still, r)
	}
	l.kept = still
}

// receive matches a batch of receipts against the message.
func (l *ledger) receive(receipts []engine.Receipt) tally {
	var t tally
	for _, r := range receipts {
		switch {
		case l.reference == "" || r.ProviderReference != l.reference:
			l.kept = append(l.kept, r)
			t.unmatched++
		case l.apply(r):
			t.applied++
		default:
			t.stale++
		}
	}
	return t
}

// apply moves the report forward with r, reporting whether it moved.
func (l *ledger) apply(r engine.Receipt) bool {
	if !l.report.Advances(r.Report) {
		return false
	}
	l.report, l.code = r.Report, r.Code
	return true
}
