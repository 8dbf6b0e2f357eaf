//go:build !cgo

package store

// cgoEnabled reports whether this binary was built with cgo, which mattn/go-sqlite3 needs.
const cgoEnabled = false
