//go:build !cgo

package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestOpenWithoutCgo runs only in a binary built with CGO_ENABLED=0 (the rest of the suite
// needs cgo): Open must refuse clearly instead of failing somewhere inside the driver stub.
func TestOpenWithoutCgo(t *testing.T) {
	_, err := Open(context.Background(), Config{Path: filepath.Join(t.TempDir(), "s.db"), AuditKey: internalKey, Migrate: true})
	if !errors.Is(err, ErrCgoDisabled) {
		t.Fatalf("Open without cgo: %v, want ErrCgoDisabled", err)
	}
}
