package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"

	"switchboard/engine"
)

// batch is one group-commit transaction, owned by the writer goroutine.
type batch struct {
	s      *Store
	w      *writer // the writer running the batch
	ctx    context.Context
	now    time.Time  // the clock when the batch began, for defaults
	chain  chainState // the audit chain as this batch advances it
	daily  map[dailyKey]*dailyCount
	poison error // a failure that dooms the whole transaction
	// fast runs acceptances without a savepoint each (see acceptOp.apply); a batch whose fast
	// run failed is run again with fast unset.
	fast bool
	// pending are the acceptances the fast path gathered and has not written yet.
	pending []pendingAccept
	// lockDaily makes the batch lock the daily counters it reads (PostgreSQL), for a batch run
	// again because its optimistic counts were overtaken.
	lockDaily bool
	// matches are the messages holding the references of the batch's receipts, matched before
	// its requests are applied (prefetchReceipts); nil when it has none.
	matches map[receiptRef][]string
	// reports are the reports of the prefetched messages as the batch's statements leave them,
	// for the messages whose report only receipts of this batch have moved since.
	reports map[string]engine.Report
	// changed, inboxEvents and deviceEvents are the subjects whose events flushEvents writes
	// before the commit; wroteEvents says it wrote some.
	changed      []string
	inboxEvents  []inboxEvent
	deviceEvents []*engine.DeviceUnregistered
	wroteEvents  bool
	// queued are the statements waiting for the next pipeline (pipeline.go).
	queued []laterRow
}

// dailyKey is one access profile's UTC day.
type dailyKey struct {
	profile string
	day     string
}

// dailyCount is a daily counter as the batch found it and as it leaves it. A counter of a profile
// without a daily limit is never read: the batch only adds its acceptances to it when it ends.
type dailyCount struct {
	stored, now int64
	read        bool  // stored was read from the database
	limit       int64 // the greatest daily limit an acceptance of this batch was checked against
}

// begin opens a batch transaction on the writer's connection.
func (w *writer) begin() (*batch, error) {
	s := w.s
	if w.conn == nil {
		if err := w.reconnect(); err != nil {
			return nil, err
		}
	}
	b := &batch{s: s, w: w, ctx: context.Background(), now: s.clock.Now(), chain: w.chain}
	if err := b.execCached(s.q.begin); err != nil {
		return nil, fmt.Errorf("store: begin batch: %w", err)
	}
	return b, nil
}

// finish writes what the batch accumulated in memory (daily counters, the audit chain head)
// and commits. On any failure it rolls everything back and leaves the writer's audit chain
// where it was before the batch.
func (b *batch) finish() error {
	err := b.poison
	if err == nil {
		err = b.flushLater()
	}
	if err == nil {
		err = b.flushEvents()
	}
	if err == nil {
		err = b.flushDaily()
	}
	if err == nil {
		err = b.flushAuditHead()
	}
	if err == nil {
		if cerr := b.execCached(b.s.q.commit); cerr != nil {
			err = fmt.Errorf("store: commit batch: %w", cerr)
		}
	}
	if err != nil {
		if rerr := b.execCached(b.s.q.rollback); rerr != nil {
			b.s.log.Debug("store: rollback after failed batch", "err", rerr)
		}
		return err
	}
	b.w.chain = b.chain
	if b.s.cdb != nil {
		b.s.committed()
	}
	if b.wroteEvents && b.s.cfg.EventsWritten != nil {
		b.s.cfg.EventsWritten()
	}
	return nil
}

// stmt returns the writer's prepared statement for query, rebinding and preparing it on first
// use (rebinding a statement that was already rebound changes nothing). Only the writer's
// goroutine calls it, so the cache needs no lock.
func (w *writer) stmt(ctx context.Context, query string) (*sqlx.Stmt, error) {
	if st, ok := w.stmts[query]; ok {
		return st, nil
	}
	st, err := w.conn.PreparexContext(ctx, w.s.d.rebind(query))
	if err != nil {
		return nil, err
	}
	w.stmts[query] = st
	return st, nil
}

// prepared returns the writer's prepared statement for query once the statements queued for a
// pipeline have run: every statement of a batch runs in the order the batch issued it.
func (b *batch) prepared(query string) (*sqlx.Stmt, error) {
	if err := b.flushLater(); err != nil {
		return nil, err
	}
	return b.w.stmt(b.ctx, query)
}

// execCached runs a fixed statement on the write connection.
func (b *batch) execCached(query string, args ...any) error {
	_, err := b.execN(query, args...)
	return err
}

// execN runs a fixed statement and returns how many rows it changed.
func (b *batch) execN(query string, args ...any) (int64, error) {
	st, err := b.prepared(query)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(b.ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// insert runs a fixed INSERT … RETURNING of one integer (the new row's id) and returns it.
func (b *batch) insert(query string, args ...any) (int64, error) {
	var id int64
	err := b.get(&id, query, args...)
	return id, err
}

// get reads one row of a fixed statement into dest.
func (b *batch) get(dest any, query string, args ...any) error {
	st, err := b.prepared(query)
	if err != nil {
		return err
	}
	return st.GetContext(b.ctx, dest, args...)
}

// selectRows reads the rows of a fixed statement into dest, a pointer to a slice.
func (b *batch) selectRows(dest any, query string, args ...any) error {
	st, err := b.prepared(query)
	if err != nil {
		return err
	}
	return st.SelectContext(b.ctx, dest, args...)
}

// scanEach runs a fixed query and hands each row to scan, for the hot reads that scan into
// their own fields (messageRow.fields) instead of through sqlx's reflection.
func (b *batch) scanEach(query string, args []any, scan func(*sql.Rows) error) error {
	st, err := b.prepared(query)
	if err != nil {
		return err
	}
	rs, err := st.QueryContext(b.ctx, args...)
	if err != nil {
		return err
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			return err
		}
	}
	return rs.Err()
}

// execIn runs a statement with an IN (?) list expanded by sqlx.In. The list is padded to a
// power of two (see padIn), so that the statement takes one of a few texts and stays prepared:
// parsing and planning a new text at every claim cost more than running it.
func (b *batch) execIn(query string, args ...any) (int64, error) {
	q, a, err := sqlx.In(query, padIn(args)...)
	if err != nil {
		return 0, err
	}
	st, err := b.prepared(q)
	if err != nil {
		return 0, err
	}
	res, err := st.ExecContext(b.ctx, a...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// selectIn reads the rows of a statement with an expanded (and padded) IN (?) list into dest.
func (b *batch) selectIn(dest any, query string, args ...any) error {
	q, a, err := sqlx.In(query, padIn(args)...)
	if err != nil {
		return err
	}
	st, err := b.prepared(q)
	if err != nil {
		return err
	}
	return st.SelectContext(b.ctx, dest, a...)
}

// padIn returns args with every list argument ([]int64 or []string) grown to the next power of
// two by repeating its last element. IN (…) means the same with duplicates: an UPDATE or DELETE
// touches each row once and a SELECT returns it once.
func padIn(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		switch l := a.(type) {
		case []int64:
			out[i] = padList(l)
		case []string:
			out[i] = padList(l)
		default:
			out[i] = a
		}
	}
	return out
}

func padList[T any](l []T) []T {
	n := len(l)
	if n == 0 {
		return l
	}
	size := 1
	for size < n {
		size <<= 1
	}
	out := make([]T, size)
	copy(out, l)
	for i := n; i < size; i++ {
		out[i] = l[n-1]
	}
	return out
}

// dailyCount returns the acceptances counted so far for k, checked against limit (0: none). With
// a limit, the stored count is read on first use in this batch; without one, the count is only
// what this batch added. On PostgreSQL the read is optimistic: flushDaily finds out whether other
// writers counted in the meantime.
func (b *batch) dailyCount(k dailyKey, limit int) (int64, error) {
	read := limit > 0
	c, ok := b.daily[k]
	if !ok {
		if b.daily == nil {
			b.daily = make(map[dailyKey]*dailyCount)
		}
		c = &dailyCount{}
		b.daily[k] = c
	}
	c.limit = max(c.limit, int64(limit))
	if read && !c.read {
		var n int64
		stmt := b.s.q.accept.dailyCount
		if b.lockDaily && b.s.q.accept.dailyCountLocked != "" {
			stmt = b.s.q.accept.dailyCountLocked
		}
		err := b.get(&n, stmt, k.profile, k.day)
		if err != nil && !isNoRows(err) {
			return 0, fmt.Errorf("store: read daily count: %w", err)
		}
		c.stored, c.now, c.read = n, n+c.now-c.stored, true
	}
	return c.now, nil
}

// countDaily adds one acceptance to k; dailyCount must have been called for k first.
func (b *batch) countDaily(k dailyKey) { b.daily[k].now++ }

// flushDaily adds what the batch counted to the stored counts, one statement per profile and
// day, in profile order (rows locked in one order by every writer cannot deadlock). It runs last
// before the commit, so that on PostgreSQL a counter row stays locked only for the commit, not
// for the whole batch. When the new count passes the limit the batch checked against, another
// writer counted after this batch read the count: the batch fails with errDailyOvertaken and
// the writer runs it again, reading the counts under lock.
func (b *batch) flushDaily() error {
	keys := make([]dailyKey, 0, len(b.daily))
	for k, c := range b.daily {
		if c.now != c.stored {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(x, y dailyKey) int {
		return cmp.Or(cmp.Compare(x.profile, y.profile), cmp.Compare(x.day, y.day))
	})
	for _, k := range keys {
		c := b.daily[k]
		var n int64
		if err := b.get(&n, b.s.q.accept.dailyUpsert, k.profile, k.day, c.now-c.stored); err != nil {
			return fmt.Errorf("store: write daily count: %w", err)
		}
		if c.limit > 0 && n > c.limit && !b.lockDaily {
			return errDailyOvertaken
		}
	}
	return nil
}

// errDailyOvertaken fails a batch whose optimistic daily count was overtaken by another writer's
// acceptances, so that it would pass a daily limit; the writer runs it again under lock.
var errDailyOvertaken = errors.New("store: a daily count moved under the batch; running it again under lock")
