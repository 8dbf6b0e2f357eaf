// Package store imports a leaf package, so it is not a leaf itself.
package store

import _ "switchboard/providers/leafkit"
