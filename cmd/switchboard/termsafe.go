package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// termSafe is s made harmless for an operator's terminal: every rune strconv.Quote would escape
// (control characters such as ESC, CR and BEL, DEL, C1 controls, tabs, format characters such as
// the bidi overrides U+202A–U+202E and U+2066–U+2069, line and paragraph separators, and bytes
// that are not UTF-8) is written as its Go escape (\x1b, \r, \a, \u202e, \xff), so that stored
// or remote-supplied text can neither move the cursor, rewrite a line, reorder what follows it
// nor break a table's columns. Every human printer passes such text through it; -o json carries
// the exact value.
func termSafe(s string) string {
	if plainASCII(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsPrint(r):
			b.WriteString(s[i : i+size])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u202e': the escape between the quotes
			b.WriteString(q[1 : len(q)-1])
		}
		i += size
	}
	return b.String()
}

// plainASCII reports whether s is printable ASCII only, which needs no escaping.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
