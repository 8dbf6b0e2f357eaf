// Package smtpsink is the stand-in SMTP relay of `switchboard dev` and `switchboard bench`: an
// in-process go-smtp server that takes every message, keeps each one as an .eml file in a
// folder, and counts messages per Message-ID so that a benchmark or a test can tell how many
// it saw more than once.
//
// It can offer STARTTLS (Options.TLSConfig), require AUTH PLAIN (Options.Username and
// Password), and verify each message's DKIM signatures against a DNS stand-in
// (Options.LookupTXT), recording the result in an Authentication-Results header at the top of
// the stored file and in Stats.
//
// smtpsink imports go-smtp, go-sasl, go-msgauth and the standard library. It must never import
// engine, store, scripting or the smtp provider: it stands on the far side of the wire.
package smtpsink
