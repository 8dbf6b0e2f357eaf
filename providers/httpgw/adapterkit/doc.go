// Package adapterkit writes the starting point of a new HTTP gateway adapter (`switchboard
// adapter init`) and holds switchboard.d.ts, the TypeScript declarations of the adapter API
// that editors and `tsc --checkJs` read.
//
// The templates under template/ are plain files: the adapters are classic scripts annotated
// for TypeScript (a test type-checks them and every bundled adapter against switchboard.d.ts),
// and each channel's golden case gets its expectations from the real runner when it is
// written, so that it passes as written.
//
// adapterkit imports providers/httpgw/adaptertest and the standard library.
package adapterkit
