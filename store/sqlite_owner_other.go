//go:build !unix

package store

import "os"

// lockOwner takes no lock on a system without flock(2): there the operator keeps to one
// process per SQLite database.
func lockOwner(string) (*os.File, error) { return nil, nil }
