// Package enginetest holds test helpers for the engine and its implementations: a fake clock
// that moves only when told, and self-signed certificate files for TLS listeners. It imports
// engine and the standard library only.
package enginetest
