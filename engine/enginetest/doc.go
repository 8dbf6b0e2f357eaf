// Package enginetest holds test helpers for the engine and its implementations: a fake clock
// that moves only when told, self-signed certificate files for TLS listeners, and a buffer that
// goroutines write while a test reads it. It imports engine and the standard library only.
package enginetest
