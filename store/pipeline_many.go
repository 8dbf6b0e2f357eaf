package store

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Multi-row statements (PostgreSQL). A pipeline saves the round trips of a batch's finishes
// and receipts, but the database still parses, plans and runs each as a statement of its
// own: for the folded finish, a quarter of its CPU (measured over 20,000 finishes in pages of
// 100 on this schema: 111-142 µs of the backend's CPU a finish one statement each, 84-102 µs
// as one statement a page). So a queued statement may carry its multi-row form (laterRow.many):
// the same statement over arrays, one array per parameter of the single form and in the same
// order, answering one row per element in element order, with the single form's answer
// columns. flushLater runs a run of consecutive statements that share a multi-row form as
// one statement; a run never holds two statements for the same message (two receipts of one
// message must move its report one after the other), so the rows of one run never depend on
// each other. The audit chain was advanced by each statement as it was queued, in queue
// order; a multi-row insert writes the same records, whatever order it writes them in.

// maxMergedRows bounds the rows of one multi-row statement.
const maxMergedRows = 1000

// mergedRun is one statement of a pipeline: a queued statement on its own, or a run of them
// as one multi-row statement.
type mergedRun struct {
	rows []laterRow
	// args are the multi-row statement's arrays; nil for a statement on its own.
	args []any
}

// mergeRuns splits queued into runs, in order: consecutive statements with the same multi-row
// form, for distinct messages, whose parameters make arrays, form one run.
func mergeRuns(queued []laterRow) []mergedRun {
	var runs []mergedRun
	for i := 0; i < len(queued); {
		j := i + 1
		if q := queued[i]; q.many != "" {
			keys := map[string]bool{q.key: true}
			for j < len(queued) && j-i < maxMergedRows && queued[j].many == q.many && !keys[queued[j].key] {
				keys[queued[j].key] = true
				j++
			}
		}
		run := mergedRun{rows: queued[i:j]}
		if len(run.rows) > 1 {
			args, err := transpose(run.rows)
			if err != nil { // a parameter of a kind the arrays do not take: one by one
				for _, q := range run.rows {
					runs = append(runs, mergedRun{rows: []laterRow{q}})
				}
				i = j
				continue
			}
			run.args = args
		}
		runs = append(runs, run)
		i = j
	}
	return runs
}

// queue adds the run's statement to p.
func (r mergedRun) queue(p *pgx.Batch) {
	if r.args == nil {
		p.Queue(r.rows[0].query, r.rows[0].args...)
		return
	}
	p.Queue(r.rows[0].many, r.args...)
}

// read hands each statement of the run its answer row.
func (r mergedRun) read(res pgx.BatchResults) error {
	if r.args == nil {
		return r.rows[0].scan(res.QueryRow())
	}
	rows, err := res.Query()
	if err != nil {
		return fmt.Errorf("store: multi-row statement: %w", err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		if n == len(r.rows) {
			return fmt.Errorf("store: multi-row statement answered more than its %d rows", len(r.rows))
		}
		if err := r.rows[n].scan(rows); err != nil {
			return fmt.Errorf("store: multi-row statement, row %d: %w", n+1, err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: multi-row statement: %w", err)
	}
	if n != len(r.rows) {
		return fmt.Errorf("store: multi-row statement answered %d of its %d rows", n, len(r.rows))
	}
	return nil
}

// errNoArray is transpose's refusal of a parameter it cannot put in an array.
var errNoArray = errors.New("store: a parameter of a kind no array holds")

// transpose makes the arrays of a run: the k-th array holds the k-th parameter of each row.
// Nullable parameters (sql.NullString, sql.NullInt64) become arrays of pointers, NULL where
// the value is not valid.
func transpose(rows []laterRow) ([]any, error) {
	width := len(rows[0].args)
	for _, r := range rows {
		if len(r.args) != width {
			return nil, errNoArray
		}
	}
	out := make([]any, width)
	for k := range width {
		col, err := column(rows, k)
		if err != nil {
			return nil, err
		}
		out[k] = col
	}
	return out, nil
}

// column is the array of the k-th parameter of rows, typed by the first row's parameter.
func column(rows []laterRow, k int) (any, error) {
	switch rows[0].args[k].(type) {
	case string:
		return gather(rows, k, func(v any) (string, bool) { s, ok := v.(string); return s, ok })
	case int64:
		return gather(rows, k, func(v any) (int64, bool) { n, ok := v.(int64); return n, ok })
	case int:
		return gather(rows, k, func(v any) (int64, bool) { n, ok := v.(int); return int64(n), ok })
	case []byte:
		return gather(rows, k, func(v any) ([]byte, bool) { b, ok := v.([]byte); return b, ok })
	case sql.NullString:
		return gather(rows, k, func(v any) (*string, bool) {
			s, ok := v.(sql.NullString)
			if !ok || !s.Valid {
				return nil, ok
			}
			return &s.String, true
		})
	case sql.NullInt64:
		return gather(rows, k, func(v any) (*int64, bool) {
			n, ok := v.(sql.NullInt64)
			if !ok || !n.Valid {
				return nil, ok
			}
			return &n.Int64, true
		})
	}
	return nil, errNoArray
}

// gather converts the k-th parameter of each row with conv, refusing a row whose parameter
// is of another kind.
func gather[T any](rows []laterRow, k int, conv func(any) (T, bool)) ([]T, error) {
	out := make([]T, len(rows))
	for i, r := range rows {
		v, ok := conv(r.args[k])
		if !ok {
			return nil, errNoArray
		}
		out[i] = v
	}
	return out, nil
}
