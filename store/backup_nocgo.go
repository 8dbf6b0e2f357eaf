//go:build !cgo

package store

import "context"

// copyInto needs cgo: the sqlite driver's backup API is part of its cgo build.
func (s *Store) copyInto(context.Context, string) (int, error) { return 0, ErrCgoDisabled }
