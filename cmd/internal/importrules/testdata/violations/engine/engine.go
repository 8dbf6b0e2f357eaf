// Package engine breaks the rules on purpose: it imports the store.
package engine

import (
	_ "switchboard/providers/leafkit" // allowed: a leaf package
	_ "switchboard/store"
)
