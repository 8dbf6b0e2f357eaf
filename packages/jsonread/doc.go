// Package jsonread is Switchboard's one JSON reader. It indexes a document in one linear pass,
// checking the grammar of RFC 8259, and lets callers walk the index (objects, arrays, strings,
// numbers as written) or decode it into plain Go values, without reflection.
//
// By default it is strict: a repeated member name in any object, a string that is not valid
// UTF-8, and an escape of a lone UTF-16 surrogate are refused, where encoding/json keeps the
// last member and silently turns the bad text into U+FFFD. Request bodies are read strictly, so
// that what a caller meant is never guessed. Lenient mode takes documents as encoding/json and
// JavaScript's JSON.parse do, for text Switchboard does not own and must not refuse (a gateway's
// answer): then it gives exactly encoding/json's values.
//
// For a document without repeated names, with valid UTF-8 and paired surrogate escapes, both
// modes accept exactly what json.Valid accepts and Decode gives what json.Decoder with UseNumber
// gives. Errors name a reason and a byte offset, never the document's text.
//
// The package imports only the standard library, so that any package of the repository may
// use it (engine, packages and scripting do).
package jsonread
