package store

import (
	"fmt"
	"slices"

	"switchboard/engine"
)

// Receipt matching for a whole batch. Each receipt is matched by (provider, provider
// reference); one statement per receipt is one round trip per delivered message on PostgreSQL
// (and a cgo call on SQLite). Before a batch applies its requests, prefetchReceipts matches the
// references of every receipt in it with one statement per provider (the rows locked, and
// rows other transactions hold skipped, as the one-by-one match does). A receipt whose
// reference the prefetch did not find is matched again on its own when it is applied: an
// earlier finish of the same batch may have recorded that reference since. The prefetch also
// reads the matched messages' reports (their rows are locked, so only the batch itself can move
// them), which tells a pipelined receipt whether it will move its report (pipeline.go).

// receiptRef is one (provider, provider reference).
type receiptRef struct{ provider, ref string }

// prefetchReceipts fills b.matches with the messages holding the references of the receipts
// among reqs. On failure it poisons the batch.
func (b *batch) prefetchReceipts(reqs []*request) {
	refs := map[string][]string{} // provider → references
	for _, r := range reqs {
		o, ok := r.op.(*receiptsOp)
		if !ok || r.ctx.Err() != nil {
			continue
		}
		for _, rc := range o.receipts {
			refs[o.provider] = append(refs[o.provider], rc.ProviderReference)
		}
	}
	if len(refs) == 0 {
		return
	}
	b.matches = map[receiptRef][]string{}
	b.reports = map[string]engine.Report{}
	for provider, list := range refs {
		slices.Sort(list)
		list = slices.Compact(list)
		var rows []struct {
			ID     string `db:"id"`
			Ref    string `db:"provider_ref"`
			Report string `db:"report"`
		}
		if err := b.selectIn(&rows, b.s.q.receipt.matchMany, provider, list); err != nil {
			b.poison = fmt.Errorf("store: match receipts: %w", err)
			return
		}
		for _, row := range rows {
			k := receiptRef{provider, row.Ref}
			if !slices.Contains(b.matches[k], row.ID) {
				b.matches[k] = append(b.matches[k], row.ID)
			}
			if b.pipelines() {
				b.reports[row.ID] = engine.Report(row.Report)
			}
		}
	}
}

// matchReceipt returns the messages holding (provider, ref): those the batch prefetched, or,
// when it found none, those a statement of its own finds now.
func (b *batch) matchReceipt(provider, ref string) ([]string, error) {
	if ids := b.matches[receiptRef{provider, ref}]; len(ids) > 0 {
		return ids, nil
	}
	var ids []string
	if err := b.selectRows(&ids, b.s.q.receipt.match, provider, ref); err != nil {
		return nil, err
	}
	return ids, nil
}
