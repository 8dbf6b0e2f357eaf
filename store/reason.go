package store

import (
	"fmt"
	"slices"
	"strings"

	"switchboard/engine"
)

// A message's reason (engine.Reason) is kept in two columns of messages, reason_code and
// reason_by, both '' for none. They are written by the statement that makes a message's final
// move, and cleared by the operator actions that start it again.

// checkReason refuses a reason a store would not write: a code without a known By, or a By
// without a code.
func checkReason(r engine.Reason) error {
	if r.None() && r.By == "" {
		return nil
	}
	if r.None() || !slices.Contains(engine.ReasonByValues(), r.By) {
		return fmt.Errorf("reason %q by %q is not one a message may have", r.Code, r.By)
	}
	return nil
}

// reasonSet is the assignment of a fixed reason (the engine's words, never caller input) to a
// message's reason columns, for a statement that always writes the same one.
func reasonSet(r engine.Reason) string {
	quote := func(s string) string { return `'` + strings.ReplaceAll(s, `'`, `''`) + `'` }
	return `reason_code = ` + quote(r.Code) + `, reason_by = ` + quote(string(r.By))
}
