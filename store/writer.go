package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"time"

	"switchboard/engine"
)

// Group commit. A writer goroutine (writer.run) owns one write connection. It takes the first
// waiting request, yields once so that callers already runnable can hand theirs in, drains
// whatever is then waiting (up to maxBatch), runs them all in one transaction, commits once
// and answers each caller on its own channel. Under load batches grow by themselves, because
// requests queue up while the previous commit runs; a busy writer whose batch is still small
// waits a little for more (Gathering, below), an idle one never waits. Every write method of the store goes through the writers, and each writer's audit chain
// has one owner. SQLite has one writer, which alone holds the write lock. PostgreSQL has several
// (Config.Writers), all fed from one queue: their transactions run side by side, and the database
// arbitrates between them as it does between instances (row locks, SKIP LOCKED claims, the
// locked daily counters, the inbox lock).

// Gathering. On SQLite a commit costs about the same whatever it holds (300 µs of CPU on a
// 2-core machine, measured with a CPU profile of `bench --rate 2000`): it writes the right-hand
// leaf of every B-tree the batch touched, and a batch of one acceptance touches as many as a
// batch of fifty. Under a steady load below capacity, requests arrive one at a time and the
// batches stay small (4.7 requests a commit at 2,000 messages a second, 0.67 commits a
// message): commits were a quarter of the CPU. So a writer that is busy (its last batch ended
// less than GatherWait ago) and took fewer than gatherTarget requests keeps the batch open
// until it holds gatherTarget or GatherWait has passed since it took the first. An idle
// writer never waits: a lone request is committed at once.
//
// PostgreSQL's writers gather too: a batch there costs a begin, a commit, its chain head and,
// for the first writer, the receipt prefetch and two settings around each claim, round trips
// all. Measured with `bench --messages 20000 --callers 64 --database URL` (2 runs each, and 2
// more with --load wrk over 30,000): 26-29 requests a batch became 38-41, the database's CPU
// 245-250 → 219-229 µs per message and the instance's 237-250 → 217-230 µs, delivered
// 2,441-2,545 → 2,637-2,673 a second; accepted per second and the p99 accept latency moved
// within their spread.

// gatherTarget is the batch size at which a gathering writer stops waiting.
const gatherTarget = 64

// deliveryGather scales the target and the wait for a batch of delivery's requests alone
// (claims, finishes, lease renewals, receipts): no caller waits on a 202 for them, so such a
// batch waits up to twice as long for twice as many (an acceptance that arrives meanwhile
// joins it, and waits at most that long for its 202). Measured with
// `bench --messages 50000 --callers 64 --load wrk` (SQLite, 4 runs each, in turn): 36-38
// requests a commit became 51-53, serve CPU 254-284 → 224-264 µs per message, accepted and
// delivered per second unchanged within their spread; at a steady `--rate 2000` nothing moved
// (its batches nearly all hold an acceptance), and on PostgreSQL the changes stayed within the
// noise.
const deliveryGather = 2

// maxBatch bounds how many requests share one transaction.
const maxBatch = 256

// maxBatchRetries bounds how often a batch that the database aborted (a deadlock or a
// serialization failure between instances) runs again before its callers get the error.
const maxBatchRetries = 3

// op is one request to the writer.
type op interface {
	// apply does the op's writes inside the batch transaction and returns the op's own error
	// (ErrLeaseLost, ErrNotFound, …). It isolates its writes with b.unit, so that a failure
	// undoes only its own changes; ops with several independent items (Accept) use one unit per
	// item, record per-item results themselves and return nil.
	apply(b *batch) error
}

// request carries an op to the writer and its answer back.
type request struct {
	ctx  context.Context
	op   op
	done chan error // buffered: the writer never blocks on a caller that went away
}

// submit hands o to the writer and waits for its answer: o's own error, the batch's commit
// error, ctx's error, or engine.ErrStoreClosed. When ctx ends after the writer took the
// request, the op may still commit; the caller just stops waiting.
func (s *Store) submit(ctx context.Context, o op) error { return s.send(ctx, o, true) }

// submitAndWait is submit for ops whose result must not be lost once they ran (a claim that
// nobody receives would strand its messages in sending): ctx can stop the request only before
// the writer starts it. The wait is bounded by one batch.
func (s *Store) submitAndWait(ctx context.Context, o op) error { return s.send(ctx, o, false) }

func (s *Store) send(ctx context.Context, o op, detach bool) error {
	select {
	case <-s.stopping:
		return engine.ErrStoreClosed
	default:
	}
	r := &request{ctx: ctx, op: o, done: make(chan error, 1)}
	queue := s.requests
	if isAccept(o) {
		queue = s.accepts
	}
	select {
	case queue <- r:
	case <-s.stopping:
		return engine.ErrStoreClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.done:
		return err
	case <-s.writerDone:
		// The writer answers every request it took before it exits; one that is still
		// unanswered was left in the queue after the last drain.
		select {
		case err := <-r.done:
			return err
		default:
			return engine.ErrStoreClosed
		}
	case <-r.ctxDone(detach):
		return ctx.Err()
	}
}

// ctxDone is the request's context's Done channel, or nil (never ready) when the caller must
// wait for the answer.
func (r *request) ctxDone(detach bool) <-chan struct{} {
	if !detach {
		return nil
	}
	return r.ctx.Done()
}

// run is the writer goroutine: it runs until Close and then refuses what is queued. The first
// writer takes every request but acceptances; the others (PostgreSQL) take acceptances only, and
// a store with one writer (SQLite) takes everything in it. Claims, finishes, lease renewals and
// receipts all lock message rows, and in one writer they never wait for each other's locks (two
// writers locking the same rows in different orders would deadlock); acceptances only insert, so
// they can run side by side. Keeping acceptances out of the first writer keeps their latency
// off its round trips: on PostgreSQL (`bench --messages 20000 --callers 64 --database URL`, 2
// runs each) the p99 accept latency went from 65–99 ms to 38–42 ms, throughput unchanged
// (3,431–3,550 accepted and 1,038–1,114 delivered a second). A third writer took acceptances no
// faster (3,125–3,847 and 912–997 a second) for more CPU.
func (w *writer) run() {
	s := w.s
	var general chan *request // nil (never ready) for the acceptance-only writers
	accepts := s.accepts
	if w == s.writers[0] {
		general = s.requests
		if len(s.writers) > 1 {
			accepts = nil
		}
	}
	reqs := make([]*request, 0, maxBatch)
	var gather *time.Timer // made on the first wait
	var lastEnd time.Time  // when the last batch was answered
	for {
		select {
		case <-s.stopping: // Close wins over queued requests
			s.refuseQueued()
			return
		default:
		}
		var first *request
		select {
		case first = <-general:
		case first = <-accepts:
		case <-s.stopping:
			s.refuseQueued()
			return
		}
		reqs = append(reqs[:0], first)
		// Let callers that are ready to run hand in their requests before the batch closes.
		// This is a yield, not a wait: with nothing else runnable it returns at once.
		runtime.Gosched()
	drain:
		for len(reqs) < maxBatch {
			select {
			case r := <-general:
				reqs = append(reqs, r)
			case r := <-accepts:
				reqs = append(reqs, r)
			default:
				break drain
			}
		}
		target, wait := gatherTarget, s.cfg.GatherWait
		if !holdsAccept(reqs) {
			target, wait = deliveryGather*gatherTarget, deliveryGather*wait
		}
		if wait > 0 && len(reqs) < target && time.Since(lastEnd) < wait {
			if gather == nil {
				gather = time.NewTimer(wait)
			} else {
				gather.Reset(wait)
			}
			reqs = gatherMore(reqs, target, general, accepts, gather.C, s.stopping)
			gather.Stop()
		}
		w.runBatch(reqs)
		lastEnd = time.Now()
		clear(reqs)
	}
}

// gatherMore adds requests to reqs until it holds target, the timer fires or the store stops.
func gatherMore(reqs []*request, target int, general, accepts <-chan *request, timer <-chan time.Time, stopping <-chan struct{}) []*request {
	for len(reqs) < target {
		select {
		case r := <-general:
			reqs = append(reqs, r)
		case r := <-accepts:
			reqs = append(reqs, r)
		case <-timer:
			return reqs
		case <-stopping:
			return reqs
		}
	}
	return reqs
}

// refuseQueued answers every request still queued with ErrStoreClosed.
func (s *Store) refuseQueued() {
	for {
		select {
		case r := <-s.requests:
			r.done <- engine.ErrStoreClosed
		case r := <-s.accepts:
			r.done <- engine.ErrStoreClosed
		default:
			return
		}
	}
}

// runBatch runs reqs in one transaction and answers them.
func (w *writer) runBatch(reqs []*request) {
	s := w.s
	s.batches.Add(1)
	s.handled.Add(int64(len(reqs)))
	errs := make([]error, len(reqs))
	// The first run takes the fast path with optimistic daily counts. A run that fails in a way
	// that wrote nothing runs again: on the savepoint path after an unexpected acceptance
	// failure, under daily locks after its counts were overtaken, or as it was after the
	// database aborted it (a deadlock or serialization failure between writers). Each flag only
	// goes one way and retries are bounded, so this ends.
	fast, lockDaily, retries := true, false, 0
	for {
		b, err := w.begin()
		if err == nil {
			b.fast, b.lockDaily = fast, lockDaily
			s.applyAll(b, reqs, errs)
			err = b.finish()
		}
		switch {
		case err == nil:
		case errors.Is(err, errSlowPath) && fast:
			fast = false
			s.reruns.Add(1)
			continue
		case errors.Is(err, errDailyOvertaken) && !lockDaily:
			lockDaily = true
			continue
		case s.d.retryable(err) && retries < maxBatchRetries:
			retries++
			s.log.Debug("store: batch aborted by the database; running it again", "err", err)
			continue
		default:
			s.log.Error("store: batch transaction failed", "requests", len(reqs), "err", err)
			w.dropIfBroken()
			for _, r := range reqs {
				r.done <- err
			}
			return
		}
		break
	}
	for i, r := range reqs {
		r.done <- errs[i]
	}
}

// errSlowPath poisons a fast-path batch whose acceptance failed in a way that may have left a
// write behind; the writer rolls the batch back and runs it again with savepoints.
var errSlowPath = errors.New("store: batch needs the savepoint path")

// fastUnit runs fn without a savepoint. A failure that clean reports as leaving no write behind
// is returned as it is; any other failure poisons the batch with errSlowPath.
func (b *batch) fastUnit(fn func() error, clean func(error) bool) error {
	if b.poison != nil {
		return b.poison
	}
	mark, events := b.chain, b.eventMark()
	err := fn()
	if b.s.d.retryable(err) {
		// The database aborted the whole transaction (PostgreSQL): the batch runs again.
		b.poison = err
		return err
	}
	if err == nil || clean(err) {
		if err != nil {
			b.chain = mark
			b.undoEvents(events)
		}
		return err
	}
	b.poison = errSlowPath
	return err
}

// neverClean is the clean test of fast units whose every failure may leave a write behind.
func neverClean(error) bool { return false }

// step runs fn as one unit of the batch: without a savepoint on the fast path (fastUnit, where
// a failure clean does not vouch for sends the batch down the savepoint path), in a savepoint
// (unit) otherwise.
func (b *batch) step(fn func() error, clean func(error) bool) error {
	if b.fast {
		return b.fastUnit(fn, clean)
	}
	return b.unit(fn)
}

// applyAll applies each request's operation to the batch.
func (s *Store) applyAll(b *batch, reqs []*request, errs []error) {
	b.prefetchReceipts(reqs)
	for i, r := range reqs {
		if err := r.ctx.Err(); err != nil {
			errs[i] = err // the caller stopped waiting before its turn: do nothing
			continue
		}
		if !isAccept(r.op) {
			// Gathered acceptances are written before any other operation, which then sees
			// them as it would have one at a time.
			_ = b.flushAccepts()
		}
		errs[i] = r.op.apply(b)
	}
	_ = b.flushAccepts()
}

// unit runs fn inside a savepoint of the batch: when fn fails, its writes and its audit
// records are undone and the rest of the batch goes on. A failure of the savepoint machinery
// itself poisons the batch, which is then rolled back whole.
func (b *batch) unit(fn func() error) error {
	if b.poison != nil {
		return b.poison
	}
	if err := b.execCached(b.s.q.savepoint); err != nil {
		b.poison = fmt.Errorf("store: savepoint: %w", err)
		return b.poison
	}
	mark, events := b.chain, b.eventMark()
	if err := fn(); err != nil {
		b.chain = mark
		b.undoEvents(events)
		if b.s.d.retryable(err) {
			// A deadlock or serialization failure (PostgreSQL) is not this unit's failure:
			// the batch runs again as a whole, so no caller sees it.
			b.poison = err
			return err
		}
		if rerr := b.execCached(b.s.q.rollbackTo); rerr != nil {
			b.poison = fmt.Errorf("store: rollback to savepoint: %w", rerr)
		} else if rerr := b.execCached(b.s.q.release); rerr != nil {
			b.poison = fmt.Errorf("store: release savepoint: %w", rerr)
		}
		return err
	}
	if err := b.execCached(b.s.q.release); err != nil {
		b.poison = fmt.Errorf("store: release savepoint: %w", err)
		return b.poison
	}
	return nil
}

// isAccept reports whether o is an acceptance, whose caller waits for its 202.
func isAccept(o op) bool {
	_, ok := o.(*acceptOp)
	return ok
}

// holdsAccept reports whether a request of reqs is an acceptance.
func holdsAccept(reqs []*request) bool {
	return slices.ContainsFunc(reqs, func(r *request) bool { return isAccept(r.op) })
}
