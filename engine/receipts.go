package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// ReceiptsConfig wires a Receipts.
type ReceiptsConfig struct {
	Store  Store
	Clock  Clock
	Logger *slog.Logger
}

// Receipts records the delivery reports a provider's callback carried, once the callback was
// verified and parsed (ReceiptHandler). It decides what each receipt may do: a report moves
// only forward (Report.Advances, whose steps ReportSteps lists), so a receipt without a
// provider reference can match nothing and one whose report no step leads to (none,
// unavailable, anything unknown) can move nothing. Those are tallied here and never reach the
// store; the others go to Store.RecordReceipts, which matches them by (provider, reference) and
// applies each forward step as a guarded update with its audit record.
type Receipts struct {
	cfg ReceiptsConfig
}

// NewReceipts returns a Receipts.
func NewReceipts(cfg ReceiptsConfig) (*Receipts, error) {
	if cfg.Store == nil || cfg.Clock == nil {
		return nil, errors.New("engine: receipts need a store and a clock")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Receipts{cfg: cfg}, nil
}

// Record records the receipts of one callback from provider, at the clock's time, and says
// what they did: applied (moved a report forward), stale (matched, or could never apply, and
// moved nothing: duplicate, late, out of order, no report), unmatched (no message holds the
// reference yet: kept by the store and applied when an attempt records it; or no reference).
func (r *Receipts) Record(ctx context.Context, provider string, receipts []Receipt) (ReceiptTally, error) {
	var tally ReceiptTally
	admitted := make([]Receipt, 0, len(receipts))
	for _, rc := range receipts {
		switch {
		case rc.ProviderReference == "":
			tally.Unmatched++
		case !Receivable(rc.Report):
			tally.Stale++
		default:
			admitted = append(admitted, rc)
		}
	}
	if len(admitted) > 0 {
		t, err := r.cfg.Store.RecordReceipts(ctx, provider, admitted, r.cfg.Clock.Now())
		if err != nil {
			return tally, fmt.Errorf("record %d receipts of %s: %w", len(admitted), provider, err)
		}
		tally.Applied += t.Applied
		tally.Stale += t.Stale
		tally.Unmatched += t.Unmatched
	}
	r.cfg.Logger.Debug("receipts recorded", "provider", provider,
		"applied", tally.Applied, "stale", tally.Stale, "unmatched", tally.Unmatched)
	return tally, nil
}

// Receivable reports whether a receipt with report rep can ever move a report: whether some
// step of ReportSteps leads to it. It is asked of every receipt, so it walks the report states
// without building the steps.
func Receivable(rep Report) bool {
	for _, from := range ReportStates() {
		if from.Advances(rep) {
			return true
		}
	}
	return false
}

// ReceiptReconciler applies receipts stranded between two writers: on a store whose writers
// run side by side (PostgreSQL), a receipt can be kept as unmatched while another transaction
// records its reference, each unseen by the other. ReconcileReceipts applies such receipts (to
// at most limit messages) and says to how many. The dispatcher calls the one it is given
// (DispatcherConfig.Reconciler) at each maintenance pass.
type ReceiptReconciler interface {
	ReconcileReceipts(ctx context.Context, now time.Time, limit int) (int, error)
}
