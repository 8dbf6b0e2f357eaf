// Package jsonreadtest is the reference the differential tests and fuzzers of jsonread's users
// check against: what encoding/json makes of a document, and what a strict reader must then
// make of it. It is written without jsonread, on encoding/json's decoder and tokenizer.
package jsonreadtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"unicode/utf8"
)

// Reference is encoding/json's reading of a document.
type Reference struct {
	// Valid is json.Valid: the document is one JSON value with white space around it.
	Valid bool
	// Value is what a json.Decoder with UseNumber decodes, when Valid.
	Value any
	// RepeatsName: an object names a member twice (names as encoding/json decodes them).
	RepeatsName bool
	// InvalidUTF8: the document is not UTF-8 (a valid document can only be so in a string).
	InvalidUTF8 bool
	// LoneSurrogate: a string escapes half of a UTF-16 surrogate pair.
	LoneSurrogate bool
}

// StrictOK reports whether a strict reader must take the document: valid, and none of the
// faults encoding/json forgives.
func (r Reference) StrictOK() bool {
	return r.Valid && !r.RepeatsName && !r.InvalidUTF8 && !r.LoneSurrogate
}

// Of reads doc with encoding/json.
func Of(doc []byte) Reference {
	if !json.Valid(doc) {
		return Reference{}
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	r := Reference{Valid: true}
	if err := dec.Decode(&r.Value); err != nil {
		panic("jsonreadtest: encoding/json cannot decode a valid document: " + err.Error())
	}
	r.RepeatsName = repeatsName(doc)
	r.InvalidUTF8 = !utf8.Valid(doc)
	r.LoneSurrogate = !surrogatesPaired(doc)
	return r
}

// repeatsName walks a valid document's tokens and reports whether an object names a member
// twice.
func repeatsName(doc []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	type frame struct {
		object, wantName bool
		names            map[string]bool
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			panic("jsonreadtest: tokens of a valid document: " + err.Error())
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].object && stack[top].wantName {
			if d, ok := tok.(json.Delim); !ok || d != '}' {
				name := tok.(string)
				if stack[top].names[name] {
					return true
				}
				stack[top].names[name] = true
				stack[top].wantName = false
				continue
			}
		}
		if top >= 0 && stack[top].object {
			stack[top].wantName = true
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true, wantName: true, names: map[string]bool{}})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:top]
		}
	}
}

// surrogatesPaired reports whether every \u escape of a UTF-16 surrogate in a valid document is
// a high one followed by a low one.
func surrogatesPaired(doc []byte) bool {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '\\' {
			continue
		}
		if doc[i+1] != 'u' {
			i++ // the escaped character, which may be a backslash
			continue
		}
		switch u := escaped(doc[i:]); {
		case u >= 0xd800 && u < 0xdc00:
			if low := escaped(doc[i+6:]); low < 0xdc00 || low > 0xdfff {
				return false
			}
			i += 11
		case u >= 0xdc00 && u <= 0xdfff:
			return false
		default:
			i += 5
		}
	}
	return true
}

// escaped is the code unit of the \uXXXX escape at the start of s, or -1.
func escaped(s []byte) int64 {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	u, err := strconv.ParseUint(string(s[2:6]), 16, 16)
	if err != nil {
		return -1
	}
	return int64(u)
}
