package engine

import "time"

// Admission is the policy that decides how much dispatching may compete with acceptance for
// the machine: the dispatcher asks it, before each claim, how many claims it may hold. A nil
// Admission never holds the dispatcher back. The policies live outside the engine
// (engine/admission); docs/operations.md describes the one serve runs.
type Admission interface {
	// ClaimCap returns how many claims the dispatcher may hold now, given full, the number it
	// holds when nothing holds it back. The dispatcher keeps the answer between 1 and full, so
	// that delivery never stops. It is asked before every claim, so it must be cheap.
	ClaimCap(full int) int
	// HeldBack is the total time the policy has held the dispatcher below full, for the
	// metrics.
	HeldBack() time.Duration
}
