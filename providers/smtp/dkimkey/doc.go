// Package dkimkey makes and reads DKIM signing keys: it owns `switchboard dkim keygen` (an
// RSA-2048 or Ed25519 key written as a PEM PKCS #8 file with mode 0600, never over an existing
// file) and the DNS TXT record that publishes the public half (`S._domainkey.D` with
// `v=DKIM1; k=rsa|ed25519; p=…`, RFC 6376 section 3.6.1 and RFC 8463).
//
// The smtp provider parses its signing key with ParsePrivateKey, and the dev SMTP sink verifies
// signatures against the Record of the key dev generated, so the three agree on one format.
//
// dkimkey imports the standard library only. It must never import engine, packages, store,
// scripting, engine/runtime or any mail library: it is a leaf the command line and the provider
// both use.
package dkimkey
