package store

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
)

// Pipelining (PostgreSQL). The first writer claims, finishes and applies receipts, one
// statement each, and every statement is a round trip: on a machine whose cores the database
// and the instances share, a round trip waits for both sides to be scheduled, and the writer
// spent most of a batch waiting. On the fast path a finish does not run its statement at once:
// it queues it (later), and the queue goes to the database as one pipeline, in one round trip,
// before the next statement of the batch runs or before the commit (flushLater). Every
// statement therefore still runs in the order the batch issued it; consecutive ones of one
// kind, for distinct messages, run as one multi-row statement (pipeline_many.go).
//
// A queued finish cannot know whether it will hold, so it advances the audit chain as if it
// will. When one does not (its lease was lost, or the database refused a statement), the chain
// is wrong from there on: the batch is rolled back and runs again on the savepoint path, one
// statement at a time, where a lost lease is the clean refusal it always was. Leases are lost
// only after a lapse, so this costs nothing in a healthy run.

// laterRow is a queued statement that answers one row: scan reads the answer, then runs once
// the whole pipeline has answered (it may run statements of its own). When many is set, it is
// the statement's multi-row form, which flushLater may run for this and the statements queued
// next to it (pipeline_many.go); key names the message the statement changes.
type laterRow struct {
	query string
	args  []any
	scan  func(pgx.Row) error
	then  func() error
	many  string
	key   string
}

// pipelines reports whether the batch queues its finishes: PostgreSQL's fast path.
func (b *batch) pipelines() bool { return b.fast && b.s.d.foldWrites }

// later queues a statement for the next pipeline.
func (b *batch) later(r laterRow) { b.queued = append(b.queued, r) }

// flushLater sends the queued statements, if any, as one pipeline and reads their answers in
// order, then runs their then functions. A failure poisons the batch: with the database's own error when
// it aborted the transaction for a retry (a deadlock between writers), with errSlowPath
// otherwise, so that the batch runs again statement by statement.
func (b *batch) flushLater() error {
	if len(b.queued) == 0 {
		return nil
	}
	queued := b.queued
	b.queued = nil
	if b.poison != nil {
		return b.poison // the batch is rolled back: what it queued never runs
	}
	err := b.w.conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("store: pipeline: the connection is a %T, not pgx's", dc)
		}
		var p pgx.Batch
		runs := mergeRuns(queued)
		for _, r := range runs {
			r.queue(&p)
		}
		res := c.Conn().SendBatch(b.ctx, &p)
		var first error
		for _, r := range runs {
			if err := r.read(res); err != nil && first == nil {
				first = err
			}
			if len(r.rows) > 1 {
				b.s.merged.Add(int64(len(r.rows)))
			}
		}
		return errors.Join(first, res.Close())
	})
	if err == nil {
		for _, q := range queued {
			if err = q.then(); err != nil {
				break
			}
		}
	}
	switch {
	case err == nil:
		return nil
	case b.s.d.retryable(err):
		b.poison = err
	default:
		b.s.log.Debug("store: a pipelined statement failed; running the batch again one statement at a time", "err", err)
		b.poison = errSlowPath
	}
	return b.poison
}
